import { describe, expect, it } from "vitest";
import { legacyFrontend, withoutLegacy } from "./adoption.ts";
import {
  cpaBaseName,
  cpaClaim,
  cpaFrontendNames,
  cpaPublicIpNames,
  cpaServices,
} from "./cloudProviderAzure.ts";
import { resourceId } from "../arm/ids.ts";
import { withoutService, withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { LoadBalancer, Observed, PublicIpChoice } from "../model.ts";
import { describeOperation, plan } from "../plan/plan.ts";
import { choosePublicIp } from "../publicIps/choice.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import {
  CLUSTER,
  config,
  desired,
  FE,
  intent,
  OTHER_UID,
  publicIp,
  RG,
  SUB,
  UID,
} from "../../../test/unit/support/azure.ts";

const BASE = cpaBaseName(UID);
const svc = { namespace: "shop", name: "web", uid: UID };
const cpaTags = (service = "shop/web", cluster = "kubernetes") => ({
  "k8s-azure-service": service,
  "k8s-azure-cluster-name": cluster,
});
const adoptOf = (c: PublicIpChoice | undefined) => (c?.kind === "managed" ? c.adopt : undefined);
const lbId = (name: string) => resourceId(SUB, RG, "loadBalancers", name);

/** cloud-provider-azure's load balancer `name` with the Service's frontend, rule and probe, and another's. */
function cpaLoadBalancer(name: string, pipId: string): LoadBalancer {
  const id = lbId(name);
  const parts = (base: string, pip: string) => ({
    frontend: { name: base, id: `${id}/frontendIPConfigurations/${base}`, publicIPAddress: { id: pip } },
    probe: { name: `${base}-TCP-80`, id: `${id}/probes/${base}-TCP-80`, protocol: "Tcp", port: 30080 },
    rule: {
      name: `${base}-TCP-80`,
      protocol: "Tcp",
      frontendPort: 80,
      backendPort: 80,
      frontendIPConfiguration: { id: `${id}/frontendIPConfigurations/${base}` },
      backendAddressPool: { id: `${id}/backendAddressPools/kubernetes` },
      probe: { id: `${id}/probes/${base}-TCP-80` },
    },
  });
  const mine = parts(BASE, pipId);
  const other = parts("a0123456789abcdef0123456789abcde", resourceId(SUB, RG, "publicIPAddresses", "x"));
  return {
    name,
    id,
    location: "eastus",
    sku: { name: "Standard" },
    frontendIPConfigurations: [mine.frontend, other.frontend],
    backendAddressPools: [{ name: "kubernetes" }],
    probes: [mine.probe, other.probe],
    loadBalancingRules: [mine.rule, other.rule],
  };
}

describe("cloud-provider-azure's names and tags", () => {
  it("names as Kubernetes' DefaultLoadBalancerName does: one hex digit shorter than Portico's frontend", () => {
    expect(BASE).toBe("a0a1b2c3d00004000800000000000000");
    expect(BASE).toHaveLength(32);
    expect(FE.startsWith(BASE)).toBe(true);
    expect(FE).not.toBe(BASE);
    expect(cpaFrontendNames(UID, "IPv6")).toEqual([`${BASE}-IPv6`, BASE]);
    expect(cpaFrontendNames(UID, "IPv4", "frontends")).toEqual([BASE, `${BASE}-frontends`]);
    expect(cpaPublicIpNames("kubernetes", UID, "IPv4")).toEqual([`kubernetes-${BASE}`]);
    expect(cpaPublicIpNames("kubernetes", UID, "IPv6", `${RG}/providers/x/publicIPPrefixes/pfx`)).toEqual([
      `kubernetes-${BASE}-pfx-IPv6`,
      `kubernetes-${BASE}-pfx`,
    ]);
  });

  it("reads the service tag as a list, and claims only this Service's public IP of the anchor cluster", () => {
    const pip = (tags: Record<string, string>) => publicIp("p", { tags });
    expect(cpaServices(pip({ "k8s-azure-service": "a/b, c/d" }))).toEqual(["a/b", "c/d"]);
    expect(cpaServices(pip({ service: "a/b" }))).toEqual(["a/b"]);
    expect(cpaClaim(pip(cpaTags()), "shop/web", "kubernetes")).toBe("this");
    expect(cpaClaim(pip(cpaTags("shop/web,shop/api")), "shop/web", "kubernetes")).toBe("shared");
    expect(cpaClaim(pip(cpaTags("shop/api")), "shop/web", "kubernetes")).toBe("other");
    expect(cpaClaim(pip(cpaTags("shop/web", "elsewhere")), "shop/web", "kubernetes")).toBe("other");
    expect(cpaClaim(pip({ "k8s-azure-service": "shop/web" }), "shop/web", "kubernetes")).toBe("other");
    expect(cpaClaim(pip({ owner: "me" }), "shop/web", "kubernetes")).toBe("none");
  });
});

describe("choosing cloud-provider-azure's public IP", () => {
  const choose = (pips: ReturnType<typeof publicIp>[], annotations: Record<string, string> = {}) =>
    choosePublicIp(parseAzureSettings(annotations), svc, { cluster: CLUSTER, config: config() }, pips);

  it("takes this Service's over as Portico's own, keeping its name and address", () => {
    const pip = publicIp(`kubernetes-${BASE}`, { tags: cpaTags(), ipAddress: "20.1.2.3" });
    expect(choose([pip])).toMatchObject({
      kind: "managed",
      name: `kubernetes-${BASE}`,
      id: pip.id,
      adopt: { from: "cloud-provider-azure", address: "20.1.2.3" },
    });
  });

  it("takes it over when the azure-pip-name annotation names it too", () => {
    const pip = publicIp("named", { tags: cpaTags() });
    expect(choose([pip], { "service.beta.kubernetes.io/azure-pip-name": "named" })).toMatchObject({
      kind: "managed",
      adopt: { from: "cloud-provider-azure" },
    });
  });

  it("leaves another cluster's and another Service's alone, and uses a shared one as the user's", () => {
    const theirs = publicIp(`kubernetes-${BASE}`, { tags: cpaTags("shop/web", "other") });
    expect(choose([theirs])).toMatchObject({ kind: "managed", name: `${CLUSTER}-${FE}` });
    expect(adoptOf(choose([theirs]))).toBeUndefined();
    const shared = publicIp("shared", { tags: cpaTags("shop/web,shop/api") });
    expect(choose([shared], { "service.beta.kubernetes.io/azure-pip-name": "shared" })).toMatchObject({
      kind: "user",
    });
  });

  it("finds a public IP it took over again by its tags, not its name", () => {
    const taken = publicIp(`kubernetes-${BASE}`, {
      tags: {
        "portico.io-cluster": CLUSTER,
        "portico.io-service": "shop/web",
        "portico.io-service-uid": UID,
        "portico.io-resource": "publicip",
        "portico.io-adopted-from": "cloud-provider-azure",
      },
    });
    const chosen = choose([taken]);
    expect(chosen).toMatchObject({ kind: "managed", name: `kubernetes-${BASE}` });
    expect(adoptOf(chosen)).toBeUndefined();
  });
});

describe("the plan and the edits", () => {
  const pip = publicIp(`kubernetes-${BASE}`, { tags: cpaTags(), ipAddress: "20.1.2.3" });
  const anchored = config({ loadBalancerName: "kubernetes" });
  const observed = (lb: LoadBalancer): Observed => ({ loadBalancers: [lb], publicIps: [pip] });

  it("adopts in place on the anchor's load balancer: same public IP, Portico's names, the other Service untouched", () => {
    const d = desired(intent(), { config: anchored, publicIps: [pip] });
    const lb = cpaLoadBalancer("kubernetes", pip.id!);
    const p = plan(d, observed(lb));
    expect(p.operations.map(describeOperation)).toEqual([
      `adopt public IP ${pip.id} (cloud-provider-azure's) — address 20.1.2.3 kept`,
      expect.stringMatching(
        new RegExp(
          `^update load balancer kubernetes: adopt cloud-provider-azure's frontend ${BASE} as ${FE} \\(address kept\\)`,
        ),
      ),
    ]);
    const after = withService(lb, d);
    expect(after.frontendIPConfigurations?.map((f) => [f.name, f.publicIPAddress?.id])).toEqual([
      ["a0123456789abcdef0123456789abcde", resourceId(SUB, RG, "publicIPAddresses", "x")],
      [FE, pip.id],
    ]);
    expect(after.loadBalancingRules?.map((r) => r.name)).toEqual([
      "a0123456789abcdef0123456789abcde-TCP-80",
      `${FE}-TCP-80`,
    ]);
    expect(after.probes?.map((p) => p.name)).toEqual([
      "a0123456789abcdef0123456789abcde-TCP-80",
      `${FE}-TCP-80`,
    ]);
    expect(after.tags).toMatchObject({
      "portico.io-cluster": CLUSTER,
      "portico.io-adopted-from": "cloud-provider-azure",
    });
    // Once taken over, the load balancer is never deleted, even when Portico's last frontend leaves it.
    const alone = { ...after, frontendIPConfigurations: after.frontendIPConfigurations!.slice(1) };
    expect(
      withoutService({ ...alone, loadBalancingRules: alone.loadBalancingRules!.slice(1) }, FE),
    ).toBeDefined();
  });

  it("moves the public IP off the old load balancer first when Portico uses its own, saying traffic moves", () => {
    const d = desired(intent(), { config: config(), publicIps: [pip] });
    const lb = cpaLoadBalancer("kubernetes", pip.id!);
    const p = plan(d, observed(lb));
    expect(p.operations.map((o) => o.kind)).toEqual([
      "adoptPublicIp",
      "releaseLegacyFrontend",
      "updateLoadBalancer",
    ]);
    expect(p.notices).toEqual([expect.objectContaining({ type: "Warning", reason: "TrafficMoves" })]);
    const released = withoutLegacy(lb, BASE);
    expect(released.frontendIPConfigurations?.map((f) => f.name)).toEqual([
      "a0123456789abcdef0123456789abcde",
    ]);
    expect(released.loadBalancingRules?.map((r) => r.name)).toEqual([
      "a0123456789abcdef0123456789abcde-TCP-80",
    ]);
    expect(released.probes?.map((r) => r.name)).toEqual(["a0123456789abcdef0123456789abcde-TCP-80"]);
    expect(legacyFrontend(released, d)).toBeUndefined();
  });

  it("does not take over a load balancer another cluster's Portico owns", () => {
    const d = desired(intent(), { config: anchored, publicIps: [pip] });
    const lb = { ...cpaLoadBalancer("kubernetes", pip.id!), tags: { "portico.io-cluster": "elsewhere" } };
    expect(() => withService(lb, d)).toThrow(/LoadBalancerNameTaken|Portico did not make/);
  });

  it("keeps a secondary Service's rules on the shared public IP working, pointed at the renamed frontend", () => {
    const shared = publicIp("shared", { tags: cpaTags("shop/web,shop/api") });
    const pipName = { "service.beta.kubernetes.io/azure-pip-name": "shared" };
    const lb = cpaLoadBalancer("kubernetes", shared.id!);
    const secondary = cpaBaseName(OTHER_UID);
    const id = lbId("kubernetes");
    lb.loadBalancingRules!.push({
      name: `${secondary}-TCP-443`,
      protocol: "Tcp",
      frontendPort: 443,
      backendPort: 443,
      frontendIPConfiguration: { id: `${id}/frontendIPConfigurations/${BASE}` },
      backendAddressPool: { id: `${id}/backendAddressPools/kubernetes` },
    });
    const primary = desired(intent({ annotations: pipName }), { config: anchored, publicIps: [shared] });
    expect(primary.publicIp?.kind).toBe("user");
    const first = withService(lb, primary);
    const rule = (l: LoadBalancer, name: string) => l.loadBalancingRules?.find((r) => r.name === name);
    expect(rule(first, `${secondary}-TCP-443`)?.frontendIPConfiguration?.id).toBe(
      `${id}/frontendIPConfigurations/${FE}`,
    );
    const api = desired(
      intent(
        { annotations: pipName, ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 30443 }] },
        OTHER_UID,
        "api",
      ),
      { config: anchored, publicIps: [shared] },
    );
    const second = withService(first, api);
    expect(rule(second, `${secondary}-TCP-443`)).toBeUndefined();
    expect(rule(second, `${api.frontendName}-TCP-443`)?.frontendIPConfiguration?.id).toBe(
      `${id}/frontendIPConfigurations/${FE}`,
    );
  });

  it("ends the same when the secondary Service is served first", () => {
    const shared = publicIp("shared", { tags: cpaTags("shop/web,shop/api") });
    const pipName = { "service.beta.kubernetes.io/azure-pip-name": "shared" };
    const lb = cpaLoadBalancer("kubernetes", shared.id!);
    const id = lbId("kubernetes");
    // cloud-provider-azure's rule of the secondary Service, on the primary's frontend.
    lb.loadBalancingRules!.push({
      name: `${cpaBaseName(OTHER_UID)}-TCP-443`,
      protocol: "Tcp",
      frontendPort: 443,
      backendPort: 443,
      frontendIPConfiguration: { id: `${id}/frontendIPConfigurations/${BASE}` },
      backendAddressPool: { id: `${id}/backendAddressPools/kubernetes` },
    });
    const api = desired(
      intent(
        { annotations: pipName, ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 30443 }] },
        OTHER_UID,
        "api",
      ),
      { config: anchored, publicIps: [shared] },
    );
    const primary = desired(intent({ annotations: pipName }), { config: anchored, publicIps: [shared] });
    const both = withService(withService(lb, api), primary);
    expect(both.frontendIPConfigurations?.map((f) => f.name)).toEqual([
      "a0123456789abcdef0123456789abcde",
      FE,
    ]);
    const rule = (name: string) => both.loadBalancingRules?.find((r) => r.name === name);
    expect(rule(`${api.frontendName}-TCP-443`)?.frontendIPConfiguration?.id).toBe(
      `${id}/frontendIPConfigurations/${FE}`,
    );
    expect(rule(`${FE}-TCP-80`)?.frontendIPConfiguration?.id).toBe(`${id}/frontendIPConfigurations/${FE}`);
    expect(rule(`${BASE}-TCP-80`)).toBeUndefined();
    expect(rule(`${cpaBaseName(OTHER_UID)}-TCP-443`)).toBeUndefined();
  });
});
