// Taking a dual-stack Service over from cloud-provider-azure: each side takes its own frontend, rules and probes
// (the IPv6 ones end in -IPv6), never the other side's.
import { describe, expect, it } from "vitest";
import { cpaBaseName } from "./cloudProviderAzure.ts";
import { resourceId } from "../arm/ids.ts";
import { withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { LoadBalancer } from "../model.ts";
import { frontendName } from "../names.ts";
import {
  config,
  dualStackIntent,
  dualStackNetwork,
  publicIp,
  RG,
  sides,
  SUB,
  UID,
} from "../../../test/unit/support/azure.ts";

const BASE = cpaBaseName(UID);
const tags = { "k8s-azure-service": "shop/web", "k8s-azure-cluster-name": "kubernetes" };
const v4 = publicIp(`kubernetes-${BASE}`, { tags, ipAddress: "20.1.2.3" });
const v6 = publicIp(`kubernetes-${BASE}-IPv6`, {
  tags,
  ipAddress: "2001:db8::1",
  publicIPAddressVersion: "IPv6",
});

function cpaDualStack(): LoadBalancer {
  const id = resourceId(SUB, RG, "loadBalancers", "kubernetes");
  const side = (frontend: string, pip: string, rule: string, pool: string) => ({
    frontend: {
      name: frontend,
      id: `${id}/frontendIPConfigurations/${frontend}`,
      publicIPAddress: { id: pip },
    },
    probe: { name: rule, id: `${id}/probes/${rule}`, protocol: "Tcp", port: 30080 },
    rule: {
      name: rule,
      protocol: "Tcp",
      frontendPort: 80,
      backendPort: 80,
      frontendIPConfiguration: { id: `${id}/frontendIPConfigurations/${frontend}` },
      backendAddressPool: { id: `${id}/backendAddressPools/${pool}` },
      probe: { id: `${id}/probes/${rule}` },
    },
  });
  const four = side(BASE, v4.id!, `${BASE}-TCP-80`, "kubernetes");
  const six = side(`${BASE}-IPv6`, v6.id!, `${BASE}-TCP-80-IPv6`, "kubernetes-IPv6");
  return {
    name: "kubernetes",
    id,
    location: "eastus",
    sku: { name: "Standard" },
    frontendIPConfigurations: [four.frontend, six.frontend],
    backendAddressPools: [{ name: "kubernetes" }, { name: "kubernetes-IPv6" }],
    probes: [four.probe, six.probe],
    loadBalancingRules: [four.rule, six.rule],
  };
}

describe("a dual-stack Service taken over from cloud-provider-azure", () => {
  const [ipv4, ipv6] = sides(dualStackIntent(), {
    config: config({ loadBalancerName: "kubernetes" }),
    network: dualStackNetwork,
    publicIps: [v4, v6],
  });

  it("takes over both public IPs, each for its family", () => {
    expect(ipv4!.publicIp).toMatchObject({ kind: "managed", id: v4.id, adopt: { address: "20.1.2.3" } });
    expect(ipv6!.publicIp).toMatchObject({ kind: "managed", id: v6.id, adopt: { address: "2001:db8::1" } });
  });

  it("leaves the IPv6 side's parts to the IPv6 side, then takes them over there", () => {
    const first = withService(cpaDualStack(), ipv4!);
    const names = (lb: LoadBalancer, key: "frontendIPConfigurations" | "loadBalancingRules" | "probes") =>
      (lb[key] ?? []).map((c) => c.name).sort();
    expect(names(first, "frontendIPConfigurations")).toEqual([`${BASE}-IPv6`, frontendName(UID)].sort());
    expect(names(first, "loadBalancingRules")).toEqual(
      [`${BASE}-TCP-80-IPv6`, `${frontendName(UID)}-TCP-80`].sort(),
    );
    expect(names(first, "probes")).toEqual([`${BASE}-TCP-80-IPv6`, `${frontendName(UID)}-TCP-80`].sort());
    const both = withService(first, ipv6!);
    const v6Name = frontendName(UID, "IPv6");
    expect(names(both, "frontendIPConfigurations")).toEqual([frontendName(UID), v6Name].sort());
    expect(both.frontendIPConfigurations?.find((f) => f.name === v6Name)?.publicIPAddress?.id).toBe(v6.id);
    expect(names(both, "loadBalancingRules")).toEqual(
      [`${frontendName(UID)}-TCP-80`, `${v6Name}-TCP-80`].sort(),
    );
  });
});
