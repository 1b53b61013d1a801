import { describe, expect, it } from "vitest";
import type { InspectNode } from "../../provider.ts";
import { allowRuleText, inspectService, probeText } from "./inspect.ts";
import type { LoadBalancer, NetworkSecurityGroup, Observed } from "../model.ts";
import { ownershipTags } from "../names.ts";
import { withServiceRules } from "../security/rulesEdit.ts";
import { CLUSTER, desired, FE, intent, publicIp, UID, written } from "../../../test/unit/support/azure.ts";

const svc = { namespace: "shop", name: "web", uid: UID };
const INTERNAL = { "service.beta.kubernetes.io/azure-load-balancer-internal": "true" };

/** ARM after the Service was fully set up: public IP (Portico's), load balancer and security rules. */
function settled(d = desired()): Observed {
  const pips =
    d.publicIp?.kind === "managed"
      ? [publicIp(d.publicIp.name, { tags: ownershipTags(CLUSTER, svc, "publicip"), ipAddress: "20.0.0.7" })]
      : [];
  const nsg: NetworkSecurityGroup = { name: "nsg", securityRules: [] };
  return {
    loadBalancers: [written(d)],
    publicIps: pips,
    securityGroup: withServiceRules(nsg, {
      frontend: d.frontendName,
      description: d.securityRuleDescription,
      rules: d.securityRules!,
      frontendAddress: "20.0.0.7",
    }),
  };
}

/** The tree as `porticoctl status` indents it, with `!` on warnings, so the tests read like the output. */
function text(nodes: InspectNode[], indent = ""): string {
  return nodes
    .map((n) => {
      const mark = n.health === "warn" || n.health === "bad" ? `!${n.health} ` : "";
      return `${indent}${mark}${n.label}\n${text(n.children ?? [], indent + "  ")}`;
    })
    .join("");
}

describe("inspectService", () => {
  it("shows the frontend's address, each rule with its probe, the pool's addresses, the public IP and the allow rules", () => {
    const lb = settled().loadBalancers[0]!;
    expect(text(inspectService(settled(), svc))).toBe(
      [
        `load balancer ${lb.name} (public, Standard)`,
        `  frontend ${FE} 20.0.0.7`,
        `    public IP ${CLUSTER}-${FE} (Portico's, tagged for this Service, Static)`,
        "  rule TCP 80 → 30080, floating IP off, distribution Default",
        "    probe Tcp:30080",
        "  backend pool portico-nodes: 2 addresses",
        "    address 10.0.1.10 (node-a)",
        "    address 10.0.1.11 (node-b)",
        "security group nsg",
        "  allow TCP Internet → 10.0.1.0/24:30080 (priority 500)",
        "",
      ].join("\n"),
    );
  });

  it("an internal frontend shows its private address and subnet", () => {
    const d = desired(intent({ annotations: INTERNAL }));
    const observed = settled(d);
    const lb = observed.loadBalancers[0]!;
    const fe = lb.frontendIPConfigurations!.find((f) => f.name === FE)!;
    fe.privateIPAddress = "10.0.1.40";
    const tree = inspectService(observed, svc);
    expect(tree[0]!.label).toBe(`load balancer ${CLUSTER}-internal (internal, Standard)`);
    expect(tree[0]!.children![0]).toEqual({ label: `frontend ${FE} 10.0.1.40 in subnet nodes (Dynamic)` });
    // Before ARM has given it an address, the frontend says so.
    delete fe.privateIPAddress;
    expect(inspectService(observed, svc)[0]!.children![0]).toMatchObject({
      label: `frontend ${FE} <no address yet> in subnet nodes (Dynamic)`,
      health: "warn",
    });
  });

  it("a user's own public IP is named as theirs", () => {
    const d = desired(intent({ annotations: { "service.beta.kubernetes.io/azure-pip-name": "mine" } }), {
      publicIps: [publicIp("mine")],
    });
    const observed: Observed = { loadBalancers: [written(d)], publicIps: [publicIp("mine")] };
    expect(text(inspectService(observed, svc))).toContain(
      "public IP mine (the user's own; Portico only uses it, Static)",
    );
  });

  it("marks draining addresses, an empty pool, a rule without a probe and a missing public IP", () => {
    const observed = settled();
    const lb = observed.loadBalancers[0]!;
    lb.backendAddressPools![0]!.loadBalancerBackendAddresses![1]!.adminState = "Down";
    expect(text(inspectService(observed, svc))).toContain(
      "!warn address 10.0.1.11 (node-b) draining (adminState Down)",
    );

    lb.backendAddressPools![0]!.loadBalancerBackendAddresses = [];
    delete lb.loadBalancingRules![0]!.probe;
    observed.publicIps = [];
    const out = text(inspectService(observed, svc));
    expect(out).toContain("!warn backend pool portico-nodes: no addresses, so no backend receives traffic");
    expect(out).toContain("!warn no probe: every backend receives traffic, whether it serves or not");
    expect(out).toContain(`!warn frontend ${FE} uses public IP ${CLUSTER}-${FE}, which was not found`);
  });

  it("a frontend without rules, and a security group without the Service's allow rules, are warnings", () => {
    const observed = settled();
    const lb: LoadBalancer = observed.loadBalancers[0]!;
    lb.loadBalancingRules = [];
    observed.securityGroup = { name: "nsg", securityRules: [] };
    const out = text(inspectService(observed, svc));
    expect(out).toContain("!warn no load-balancing rules for this frontend");
    expect(out).toContain("!warn security group nsg: no allow rules for this Service");
  });

  it("with several configured load balancers, names the configuration that holds the Service", () => {
    const configs = [
      { name: "lb-b", primaryVMSet: "pool-b" },
      { name: CLUSTER, primaryVMSet: "pool-a" },
    ];
    const [node] = inspectService(settled(), svc, configs);
    expect(node!.label).toBe(
      `load balancer ${CLUSTER} (public, Standard), configuration ${CLUSTER} of 2 (multipleStandardLoadBalancerConfigurations)`,
    );
    const [elsewhere] = inspectService(settled(), svc, [configs[0]!]);
    expect(elsewhere!.label).toContain("in no configuration of multipleStandardLoadBalancerConfigurations");
    expect(inspectService(settled(), svc)[0]!.label).toBe(`load balancer ${CLUSTER} (public, Standard)`);
  });

  it("nothing found is one warning; a tagged public IP no frontend uses is shown", () => {
    expect(inspectService({ loadBalancers: [], publicIps: [] }, svc)).toEqual([
      {
        label: `no Azure load balancer has frontend ${FE} and no public IP is tagged for this Service`,
        health: "warn",
      },
    ]);
    const other = settled(desired(intent({}, "0b1b2c3d-0000-4000-8000-00000000000b", "other")));
    const pip = publicIp("left", { tags: ownershipTags(CLUSTER, svc, "publicip"), ipAddress: "20.0.0.9" });
    expect(text(inspectService({ ...other, publicIps: [pip] }, svc))).toBe(
      [
        "!warn public IP left 20.0.0.9 is Portico's for this Service but no frontend uses it",
        "!warn security group nsg: no allow rules for this Service",
        "",
      ].join("\n"),
    );
  });
});

describe("formatting", () => {
  it("probeText shows an HTTP probe's path and a TCP probe's port only", () => {
    expect(probeText({ protocol: "Http", port: 10256, requestPath: "/healthz" })).toBe("Http:10256/healthz");
    expect(probeText({ protocol: "Tcp", port: 30080, requestPath: "/ignored" })).toBe("Tcp:30080");
  });

  it("allowRuleText lists several sources and destinations with the port", () => {
    expect(
      allowRuleText({
        access: "Allow",
        protocol: "Udp",
        sourceAddressPrefixes: ["1.2.3.0/24", "5.6.7.8/32"],
        destinationAddressPrefixes: ["10.0.1.10", "10.0.1.11"],
        destinationPortRange: "30053",
        priority: 501,
      }),
    ).toBe("allow UDP 1.2.3.0/24, 5.6.7.8/32 → 10.0.1.10:30053, 10.0.1.11:30053 (priority 501)");
  });
});
