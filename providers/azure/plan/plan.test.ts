import { describe, expect, it } from "vitest";
import { withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { NetworkSecurityGroup, Observed } from "../model.ts";
import { ownershipTags } from "../names.ts";
import { describeChanges, describeOperation, plan, planDeletion, type Operation } from "./plan.ts";
import { withServiceRules } from "../security/rulesEdit.ts";
import {
  CLUSTER,
  config,
  desired,
  FE,
  intent,
  OTHER_UID,
  publicIp,
  RG,
  UID,
  written,
} from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const svc = { namespace: "shop", name: "web", uid: UID };
const INTERNAL = { [`${A}azure-load-balancer-internal`]: "true" };
const emptyNsg = (): NetworkSecurityGroup => ({ name: "nsg", securityRules: [] });
const kinds = (ops: Operation[]) => ops.map((o) => o.kind);
const ourPip = (name = `${CLUSTER}-${FE}`) =>
  publicIp(name, { tags: ownershipTags(CLUSTER, svc, "publicip") });

/** ARM after the Service was fully set up: public IP, load balancer and security rules. */
function settled(d = desired()): Observed {
  const pips = d.publicIp?.kind === "managed" ? [ourPip(d.publicIp.name)] : [];
  const observed: Observed = { loadBalancers: [written(d)], publicIps: pips, securityGroup: emptyNsg() };
  const address = d.frontend.kind === "public" ? "20.0.0.1" : undefined;
  observed.securityGroup = withServiceRules(observed.securityGroup!, {
    frontend: d.frontendName,
    description: d.securityRuleDescription,
    rules: d.securityRules!,
    ...(address ? { frontendAddress: address } : {}),
  });
  return observed;
}

describe("plan", () => {
  it("creates the public IP, then the load balancer, then the allow rules for a new Service", () => {
    const p = plan(desired(), { loadBalancers: [], publicIps: [], securityGroup: emptyNsg() });
    expect(p.operations).toEqual([
      {
        kind: "createPublicIp",
        name: `${CLUSTER}-${FE}`,
        resourceGroup: RG,
        tags: ownershipTags(CLUSTER, svc, "publicip"),
        ipTags: [],
      },
      {
        kind: "updateLoadBalancer",
        loadBalancer: CLUSTER,
        create: true,
        changes: [`+frontend ${FE}`, "+pool portico-nodes", `+probe ${FE}-TCP-80`, `+rule ${FE}-TCP-80`],
      },
      { kind: "updateSecurityRules", securityGroup: "nsg", count: 1 },
    ]);
    expect(p.notices).toEqual([]);
  });

  it("does nothing when everything is in place", () => {
    expect(plan(desired(), settled())).toEqual({ operations: [], notices: [] });
  });

  it("adds the Service to an existing shared load balancer without creating it", () => {
    const other = desired(intent({}, OTHER_UID, "other"));
    const observed: Observed = {
      loadBalancers: [written(other)],
      publicIps: [ourPip()],
      securityGroup: emptyNsg(),
    };
    const ops = plan(desired(), observed).operations;
    expect(ops[0]).toMatchObject({ kind: "updateLoadBalancer", create: false });
    expect((ops[0] as { changes: string[] }).changes).toEqual([
      `+frontend ${FE}`,
      `+probe ${FE}-TCP-80`,
      `+rule ${FE}-TCP-80`,
    ]);
  });

  it("updates only what changed, and says what", () => {
    const observed = settled();
    const d = desired(intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 }));
    expect(plan(d, observed).operations).toEqual([
      { kind: "updateLoadBalancer", loadBalancer: CLUSTER, create: false, changes: [`~probe ${FE}-TCP-80`] },
    ]);
  });

  it("retags a public IP it made whose tags drifted", () => {
    const observed = settled();
    observed.publicIps[0]!.tags = { ...observed.publicIps[0]!.tags, "portico.io-service": "old/name" };
    expect(kinds(plan(desired(), observed).operations)).toEqual(["tagPublicIp"]);
  });

  it("moves from public to internal make-before-break: new frontend, then the old one, then its public IP", () => {
    const observed = settled();
    const p = plan(desired(intent({ annotations: INTERNAL })), observed);
    expect(kinds(p.operations)).toEqual([
      "updateLoadBalancer",
      "removeFromLoadBalancer",
      "updateSecurityRules",
      "leavePublicIp",
    ]);
    expect(p.operations[0]).toMatchObject({ loadBalancer: `${CLUSTER}-internal`, create: true });
    expect(p.operations[1]).toMatchObject({ loadBalancer: CLUSTER, deletesIt: true });
    expect(p.operations[3]).toMatchObject({ name: `${CLUSTER}-${FE}` });
  });

  it("breaks first when the public IP itself moves to another load balancer, and says so", () => {
    const observed = settled();
    const perService = desired(intent(), {
      config: config({ loadBalancerPerService: true }),
      publicIps: observed.publicIps,
    });
    const moved = plan(perService, observed);
    expect(kinds(moved.operations)).toEqual(["removeFromLoadBalancer", "updateLoadBalancer"]);
    expect(moved.operations[1]).toMatchObject({ loadBalancer: `${CLUSTER}-${FE}`, create: true });
    expect(moved.notices[0]).toMatchObject({ type: "Warning", reason: "MovingLoadBalancer" });
    expect(moved.notices[0]!.message).toContain("unreachable until the move completes");
  });

  it("deletes a public IP it made that the Service no longer uses, never a user's", () => {
    const observed = settled();
    observed.publicIps.push(publicIp("users"));
    const d = desired(intent({ annotations: { [`${A}azure-pip-name`]: "users" } }), {
      publicIps: observed.publicIps,
    });
    const ops = plan(d, observed).operations;
    // The allow rules go to the nodes, which did not change.
    expect(kinds(ops)).toEqual(["updateLoadBalancer", "leavePublicIp"]);
    expect(ops[1]).toMatchObject({ name: `${CLUSTER}-${FE}` });
  });

  it("removes the Service's rules from a security group the controller no longer manages rules in", () => {
    const observed = settled();
    const d = { ...desired() };
    delete d.securityRules;
    expect(kinds(plan(d, observed).operations)).toEqual(["removeSecurityRules"]);
  });

  it("ignores load balancers of other clusters that happen to hold a frontend of the same name", () => {
    const observed = settled();
    const foreign = { ...written(desired()), name: "foreign", tags: { "portico.io-cluster": "elsewhere" } };
    observed.loadBalancers.push(foreign);
    expect(plan(desired(), observed).operations).toEqual([]);
  });
});

describe("planDeletion", () => {
  it("removes the rules, then the frontend (and the emptied load balancer), then the public IP", () => {
    const ops = planDeletion(svc, FE, CLUSTER, settled());
    expect(ops).toEqual([
      { kind: "removeSecurityRules", securityGroup: "nsg" },
      {
        kind: "removeFromLoadBalancer",
        loadBalancer: CLUSTER,
        deletesIt: true,
        reason: "the Service no longer needs it",
      },
      {
        kind: "leavePublicIp",
        name: `${CLUSTER}-${FE}`,
        resourceGroup: RG,
        uid: UID,
        expected: { kind: "delete" },
      },
    ]);
  });

  it("keeps a load balancer other Services still use", () => {
    const observed = settled();
    observed.loadBalancers[0] = withService(
      observed.loadBalancers[0],
      desired(intent({}, OTHER_UID, "other")),
    );
    expect(planDeletion(svc, FE, CLUSTER, observed)[1]).toMatchObject({ deletesIt: false });
  });

  it("is empty when nothing is left", () => {
    expect(
      planDeletion(svc, FE, CLUSTER, {
        loadBalancers: [],
        publicIps: [publicIp("users")],
        securityGroup: emptyNsg(),
      }),
    ).toEqual([]);
  });
});

describe("descriptions", () => {
  it("list each child added, changed or removed", () => {
    const before = written(desired());
    const after = withService(
      before,
      desired(intent({ ports: [{ name: "x", protocol: "TCP", port: 443, nodePort: 30080 }] })),
    );
    expect(describeChanges(before, after, FE)).toEqual([
      `+probe ${FE}-TCP-443`,
      `-probe ${FE}-TCP-80`,
      `+rule ${FE}-TCP-443`,
      `-rule ${FE}-TCP-80`,
    ]);
  });

  it("give one line per operation", () => {
    expect(
      [
        { kind: "createPublicIp", name: "ip", resourceGroup: "rg", tags: {} },
        { kind: "tagPublicIp", name: "ip", resourceGroup: "rg", tags: {} },
        { kind: "updateLoadBalancer", loadBalancer: "lb", create: false, changes: ["+rule r"] },
        { kind: "removeFromLoadBalancer", loadBalancer: "lb", deletesIt: true, reason: "gone" },
        { kind: "updateSecurityRules", securityGroup: "nsg", count: 2 },
        { kind: "removeSecurityRules", securityGroup: "nsg" },
        { kind: "leavePublicIp", name: "ip", resourceGroup: "rg", uid: "u", expected: { kind: "delete" } },
      ].map((op) => describeOperation(op as Operation)),
    ).toEqual([
      "create public IP ip in rg",
      "set the tags of public IP ip",
      "update load balancer lb: +rule r",
      "remove the Service from load balancer lb (gone), deleting it: no frontend is left",
      "set the Service's 2 security rule(s) in network security group nsg",
      "remove the Service's rules from network security group nsg",
      "delete public IP ip",
    ]);
  });
});
