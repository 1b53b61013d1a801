import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import { inspectService } from "../observe/inspect.ts";
import { withService, withoutService } from "../loadBalancer/loadBalancerEdit.ts";
import { assertSidesWithinLimits } from "../limits/limits.ts";
import type { DesiredService, Observed, PublicIPAddress } from "../model.ts";
import { frontendName, ownershipTags } from "../names.ts";
import { plan, planDeletion } from "../plan/plan.ts";
import { leaveOutcome, observedHolders } from "../publicIps/shared.ts";
import { droppedFamilies, sideNotices } from "./sides.ts";
import { azureTraffic, trafficOfSides } from "../loadBalancer/traffic.ts";
import {
  CLUSTER,
  dualStackIntent,
  dualStackNetwork,
  FE,
  intent,
  publicIp,
  RG,
  sides,
  SUB,
  UID,
  written,
} from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const FE6 = frontendName(UID, "IPv6");
const svc = { namespace: "shop", name: "web", uid: UID };
const INTERNAL = { [`${A}azure-load-balancer-internal`]: "true" };
const dual = (i = dualStackIntent()) => sides(i, { network: dualStackNetwork });
const prefixId = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/publicIPPrefixes/${name}`;

function refusal(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** The load balancer after both sides were written, as ARM returns it. */
function bothWritten(ds: DesiredService[]) {
  return ds.reduce((lb, d) => written(d, lb), undefined as ReturnType<typeof written> | undefined)!;
}

const ourPip = (name: string, version: "IPv4" | "IPv6", ip: string): PublicIPAddress =>
  publicIp(name, {
    tags: ownershipTags(CLUSTER, svc, "publicip"),
    publicIPAddressVersion: version,
    ipAddress: ip,
  });

describe("dual-stack and IPv6 sides", () => {
  it("a dual-stack public Service: a side per family with its own public IP, frontend, node pool and rules", () => {
    const [v4, v6] = dual();
    expect([v4!.family, v6!.family]).toEqual(["IPv4", "IPv6"]);
    expect([v4!.frontendName, v6!.frontendName]).toEqual([FE, FE6]);
    expect(v4!.publicIp).toMatchObject({ kind: "managed", name: `${CLUSTER}-${FE}` });
    expect(v4!.publicIp).not.toHaveProperty("version");
    expect(v6!.publicIp).toMatchObject({ kind: "managed", name: `${CLUSTER}-${FE6}`, version: "IPv6" });
    expect(v4!.pool).toMatchObject({ name: "portico-nodes", shared: true });
    expect(v6!.pool.name).toBe("portico-nodes-ipv6");
    expect(v6!.pool.addresses.map((a) => a.ip)).toEqual(["fd00:10:0:1::10", "fd00:10:0:1::11"]);
    expect(v6!.rules.map((r) => r.name)).toEqual([`${FE6}-TCP-80`]);

    const lb = bothWritten([v4!, v6!]);
    expect(lb.frontendIPConfigurations!.map((f) => f.name)).toEqual([FE, FE6]);
    expect(lb.backendAddressPools!.map((p) => p.name)).toEqual(["portico-nodes", "portico-nodes-ipv6"]);
    const rule6 = lb.loadBalancingRules!.find((r) => r.name === `${FE6}-TCP-80`)!;
    expect(rule6.frontendIPConfiguration!.id).toMatch(new RegExp(`/frontendIPConfigurations/${FE6}$`));
    expect(rule6.backendAddressPool!.id).toMatch(/\/backendAddressPools\/portico-nodes-ipv6$/);
    // Writing the IPv4 side again leaves the IPv6 side's parts alone, and the reverse.
    expect(withService(lb, v4!)).toBe(lb);
    expect(withService(lb, v6!)).toBe(lb);
  });

  it("the plan creates the IPv6 public IP as IPv6 and lets go of neither family's public IP for the other", () => {
    const [v4, v6] = dual();
    const empty: Observed = { loadBalancers: [], publicIps: [] };
    const created = plan(v6!, empty).operations.find((o) => o.kind === "createPublicIp");
    expect(created).toMatchObject({ name: `${CLUSTER}-${FE6}`, version: "IPv6" });
    expect(plan(v4!, empty).operations.find((o) => o.kind === "createPublicIp")).not.toHaveProperty(
      "version",
    );

    const settled: Observed = {
      loadBalancers: [bothWritten([v4!, v6!])],
      publicIps: [
        ourPip(`${CLUSTER}-${FE}`, "IPv4", "20.0.0.1"),
        ourPip(`${CLUSTER}-${FE6}`, "IPv6", "2001:db8:ac::1"),
      ],
    };
    expect(plan(v4!, settled).operations).toEqual([]);
    expect(plan(v6!, settled).operations).toEqual([]);
  });

  it("an IPv6-only Service has one side, IPv6, and nothing of IPv4", () => {
    const only = dual(dualStackIntent({ ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack" }));
    expect(only.map((d) => d.family)).toEqual(["IPv6"]);
    expect(droppedFamilies(only)).toEqual(["IPv4"]);
    const lb = withService(undefined, only[0]!);
    expect(lb.frontendIPConfigurations!.map((f) => f.name)).toEqual([FE6]);
    expect(lb.backendAddressPools!.map((p) => p.name)).toEqual(["portico-nodes-ipv6"]);
  });

  it("an internal dual-stack Service takes a private address of each family from the subnet", () => {
    const [v4, v6] = dual(
      dualStackIntent({ annotations: { ...INTERNAL, [`${A}azure-load-balancer-ipv6`]: "fd00:10:0:1::99" } }),
    );
    expect(v4!.frontend).toEqual({ kind: "internal", subnetId: dualStackNetwork.subnets.nodes!.id });
    expect(v6!.frontend).toEqual({
      kind: "internal",
      subnetId: dualStackNetwork.subnets.nodes!.id,
      privateIp: "fd00:10:0:1::99",
      family: "IPv6",
    });
    const lb = bothWritten([v4!, v6!]);
    const f6 = lb.frontendIPConfigurations!.find((f) => f.name === FE6)!;
    expect(f6).toMatchObject({
      privateIPAddressVersion: "IPv6",
      privateIPAllocationMethod: "Static",
      privateIPAddress: "fd00:10:0:1::99",
    });
    expect(lb.frontendIPConfigurations!.find((f) => f.name === FE)!.privateIPAddressVersion).toBe("IPv4");
  });

  it.each([
    [
      "an IPv6 address outside the subnet's IPv6 range",
      dualStackIntent({ annotations: { ...INTERNAL, [`${A}azure-load-balancer-ipv6`]: "fd00:99::1" } }),
      "AddressNotInSubnet",
      `metadata.annotations[${A}azure-load-balancer-ipv6]`,
    ],
    [
      "an -ipv6 annotation on a Service without IPv6",
      intent({ annotations: { [`${A}azure-pip-name-ipv6`]: "mine" } }),
      "IPv6NotRequested",
      `metadata.annotations[${A}azure-pip-name-ipv6]`,
    ],
    [
      "an IPv4 address for an IPv6-only Service",
      dualStackIntent({
        ipFamilies: ["IPv6"],
        ipFamilyPolicy: "SingleStack",
        annotations: { ...INTERNAL, [`${A}azure-load-balancer-ipv4`]: "10.0.1.50" },
      }),
      "IPv4NotRequested",
      `metadata.annotations[${A}azure-load-balancer-ipv4]`,
    ],
  ])("refuses %s", (_, i, reason, field) => {
    const err = refusal(() => dual(i));
    expect([err.reason, err.field]).toEqual([reason, field]);
  });

  it("uses the user's IPv6 public IP named by azure-pip-name-ipv6, and refuses an IPv4 one there", () => {
    const mine = publicIp("my-v6", { publicIPAddressVersion: "IPv6", ipAddress: "2001:db8:ac::9" });
    const mine4 = publicIp("my-v4", { ipAddress: "20.0.0.9" });
    const i = dualStackIntent({ annotations: { [`${A}azure-pip-name-ipv6`]: "my-v6" } });
    const [v4, v6] = sides(i, { network: dualStackNetwork, publicIps: [mine, mine4] });
    expect(v6!.publicIp).toMatchObject({ kind: "user", name: "my-v6" });
    expect(v4!.publicIp).toMatchObject({ kind: "managed" });
    const wrong = dualStackIntent({ annotations: { [`${A}azure-pip-name-ipv6`]: "my-v4" } });
    const err = refusal(() => sides(wrong, { network: dualStackNetwork, publicIps: [mine, mine4] }));
    expect([err.reason, err.field]).toEqual([
      "PublicIPWrongFamily",
      `metadata.annotations[${A}azure-pip-name-ipv6]`,
    ]);
  });

  it("finds the user's IPv6 public IP by azure-load-balancer-ipv6, and makes the IPv6 one from the -ipv6 prefix", () => {
    const mine = publicIp("my-v6", { publicIPAddressVersion: "IPv6", ipAddress: "2001:db8:ac::9" });
    const byAddress = sides(
      dualStackIntent({ annotations: { [`${A}azure-load-balancer-ipv6`]: "2001:db8:ac::9" } }),
      {
        network: dualStackNetwork,
        publicIps: [mine],
      },
    );
    expect(byAddress[1]!.publicIp).toMatchObject({ kind: "user", name: "my-v6" });
    const fromPrefix = dual(
      dualStackIntent({
        annotations: {
          [`${A}azure-pip-prefix-id-ipv6`]: prefixId("v6"),
          [`${A}azure-pip-prefix-id`]: prefixId("v4"),
        },
      }),
    );
    expect(fromPrefix.map((d) => d.publicIp)).toMatchObject([
      { kind: "managed", prefixId: prefixId("v4") },
      { kind: "managed", prefixId: prefixId("v6"), version: "IPv6" },
    ]);
  });

  it("gives the DNS label to the primary family's public IP only", () => {
    const [v4, v6] = dual(dualStackIntent({ annotations: { [`${A}azure-dns-label-name`]: "shop" } }));
    expect(v4!.publicIp).toMatchObject({ dnsLabel: "shop" });
    expect(v6!.publicIp).not.toHaveProperty("dnsLabel");
  });

  it("allows each family's source ranges to its own frontend's backends", () => {
    const [v4, v6] = dual(dualStackIntent({ sourceRanges: ["203.0.113.0/24", "2001:db8:1::/48"] }));
    expect(v4!.securityRules!.map((r) => [r.sources, r.destination])).toEqual([
      [["203.0.113.0/24"], ["10.0.1.0/24"]],
    ]);
    expect(v6!.securityRules!.map((r) => [r.name, r.sources, r.destination])).toEqual([
      [`${FE6}-TCP-80`, ["2001:db8:1::/48"], ["fd00:10:0:1::/64"]],
    ]);
  });

  it("tells when one family's frontend is shut because every source range is of the other family", () => {
    const shut = dual(dualStackIntent({ sourceRanges: ["203.0.113.0/24"] }));
    expect(shut[1]!.securityRules).toEqual([]);
    const notices = sideNotices(shut);
    expect(notices.map((n) => [n.type, n.reason])).toEqual([["Warning", "FamilyClosed"]]);
    expect(notices[0]!.message).toMatch(/^the IPv6 frontend lets no source in/);
    expect(
      sideNotices(dual(dualStackIntent({ sourceRanges: ["203.0.113.0/24", "2001:db8:1::/48"] }))),
    ).toEqual([]);
    expect(sideNotices(dual())).toEqual([]);
  });

  it("ip targets: each side's pool holds the pod addresses of its family", () => {
    const ep = (ip: string) => ({ ip, ports: { http: 8080 } });
    const [v4, v6] = dual(
      dualStackIntent({
        annotations: { "portico.io/target-type": "ip" },
        endpoints: [ep("10.0.1.40"), ep("fd00:10:0:1::40")],
      }),
    );
    expect(v4!.pool.addresses.map((a) => a.ip)).toEqual(["10.0.1.40"]);
    expect(v6!.pool.addresses.map((a) => a.ip)).toEqual(["fd00:10:0:1::40"]);
  });

  it("dropping IPv6 removes the IPv6 frontend, rules, pool and public IP, and nothing of IPv4", () => {
    const [v4, v6] = dual();
    const lb = bothWritten([v4!, v6!]);
    const observed: Observed = {
      loadBalancers: [lb],
      publicIps: [
        ourPip(`${CLUSTER}-${FE}`, "IPv4", "20.0.0.1"),
        ourPip(`${CLUSTER}-${FE6}`, "IPv6", "2001:db8:ac::1"),
      ],
    };
    const ops = planDeletion(svc, FE6, CLUSTER, observed, "IPv6");
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "leavePublicIp"]);
    expect(ops[1]).toMatchObject({ name: `${CLUSTER}-${FE6}` });
    const after = withoutService(lb, FE6)!;
    expect(after.frontendIPConfigurations!.map((f) => f.name)).toEqual([FE]);
    expect(after.backendAddressPools!.map((p) => p.name)).toEqual(["portico-nodes"]);
    expect(after.loadBalancingRules!.map((r) => r.name)).toEqual([`${FE}-TCP-80`]);
  });

  it("counts both families' frontends and rules against the load balancer's limits", () => {
    const ds = dual();
    expect(() => assertSidesWithinLimits(ds, { loadBalancers: [], publicIps: [] })).not.toThrow();
    const frontends = refusal(() =>
      assertSidesWithinLimits(
        ds,
        { loadBalancers: [], publicIps: [] },
        { frontendIPConfigurationsPerLoadBalancer: 1 },
      ),
    );
    expect(frontends.reason).toBe("TooManyFrontends");
    const rules = refusal(() =>
      assertSidesWithinLimits(ds, { loadBalancers: [], publicIps: [] }, { rulesPerLoadBalancer: 1 }),
    );
    expect(rules.reason).toBe("TooManyRules");
  });
});

describe("dual-stack extras", () => {
  it("spec.loadBalancerIP with an IPv6 address asks for the IPv6 frontend's address", () => {
    const i = dualStackIntent({ annotations: INTERNAL, loadBalancerIP: "fd00:10:0:1::77" });
    const settings = parseAzureSettings(i.annotations, i.loadBalancerIP);
    expect(settings.requestedAddress).toBeUndefined();
    expect(settings.ipv6.requestedAddress).toEqual({
      address: "fd00:10:0:1::77",
      field: "spec.loadBalancerIP",
    });
    const clash = refusal(() =>
      parseAzureSettings({ [`${A}azure-load-balancer-ipv6`]: "fd00:10:0:1::78" }, "fd00:10:0:1::77"),
    );
    expect(clash.field).toBe(`metadata.annotations[${A}azure-load-balancer-ipv6]`);
  });

  it("porticoctl status shows each family's frontend with its rules, and each family's security rules", () => {
    const [v4, v6] = dual();
    const observed: Observed = {
      loadBalancers: [bothWritten([v4!, v6!])],
      publicIps: [
        ourPip(`${CLUSTER}-${FE}`, "IPv4", "20.0.0.1"),
        ourPip(`${CLUSTER}-${FE6}`, "IPv6", "2001:db8:ac::1"),
      ],
      securityGroup: { name: "nsg", securityRules: [] },
    };
    const tree = inspectService(observed, svc);
    const frontends = tree.flatMap((n) => n.children ?? []).filter((c) => c.label.startsWith("frontend "));
    expect(frontends.map((f) => f.label)).toEqual([
      `frontend ${FE} 20.0.0.1`,
      `frontend ${FE6} 2001:db8:ac::1`,
    ]);
    expect(tree.filter((n) => n.label.startsWith("security group")).length).toBe(2);
  });
});

describe("dual-stack Serving and sharing", () => {
  const ep = (ip: string, nodeName: string) => ({ ip, nodeName, ports: { http: 8080 } });

  it("serves when both families do; Local finds the node behind an IPv6 backend address", () => {
    const i = dualStackIntent({ externalTrafficPolicy: "Local", endpoints: [ep("10.244.0.5", "node-a")] });
    const both = dual(i).map((desired) => ({ desired }));
    expect(trafficOfSides(i, both, "instance")).toMatchObject({ flowing: true, reason: "BackendsReady" });
    expect(azureTraffic(i, both[1]!.desired, "instance").message).toMatch(/^1 of 2 backends/);
  });

  it("a side without backends is told with its family: nodes without IPv6 leave the IPv6 pool empty", () => {
    const i = dualStackIntent({
      endpoints: [ep("10.244.0.5", "node-a")],
      nodes: [{ name: "node-a", internalIP: "10.0.1.10" }],
    });
    const both = dual(i).map((desired) => ({ desired }));
    expect(both[1]!.desired.pool.addresses).toEqual([]);
    const t = trafficOfSides(i, both, "instance");
    expect(t).toMatchObject({ flowing: false, reason: "NoBackends" });
    expect(t.message).toMatch(/^IPv6: /);
  });

  it("an IPv6 public IP shared by another Service is handed over to it, named by its IPv6 frontend's record", () => {
    const heir = "0b1b2c3d-0000-4000-8000-00000000000b";
    const pip = publicIp("shared-v6", {
      publicIPAddressVersion: "IPv6",
      tags: { ...ownershipTags(CLUSTER, svc, "publicip"), "portico.io-shared-with": heir },
    });
    const lb = { name: "lb", tags: { [`portico.io-frontend-${frontendName(heir, "IPv6")}`]: "shop/other" } };
    const observed = { loadBalancers: [lb], publicIps: [pip] };
    expect(leaveOutcome(pip.tags!, UID, observedHolders(observed))).toMatchObject({
      kind: "handOver",
      to: heir,
      toService: "shop/other",
    });
  });
});
