import { describe, expect, test } from "vitest";
import type { ObservedLoadBalancer } from "./model.ts";
import type { Operation, Plan } from "./plan.ts";
import { makeBeforeBreak, onlyTargets } from "./passSteps.ts";

const lb = (arn: string, state = "active") => ({ arn, name: arn, state }) as unknown as ObservedLoadBalancer;
const register: Operation = {
  kind: "registerTargets",
  targetGroupName: "tg",
  targets: [{ id: "i-1", port: 1 }],
};
const deregister: Operation = {
  kind: "deregisterTargets",
  targetGroupArn: "tg",
  name: "tg",
  targets: [{ id: "i-2", port: 1 }],
};
const deleteOld: Operation = {
  kind: "deleteLoadBalancer",
  loadBalancerArn: "old",
  name: "old",
  reason: "scheme",
};
const deleteGroup: Operation = { kind: "deleteTargetGroup", targetGroupArn: "tg-old", name: "tg-old" };
const deleteSg: Operation = { kind: "deleteSecurityGroup", groupId: "sg-old", name: "sg-old" };
const createListener = { kind: "createListener", listener: { port: 80 } } as unknown as Operation;

describe("onlyTargets", () => {
  test("registrations and deregistrations on an existing load balancer, nothing replaced", () => {
    expect(onlyTargets({ operations: [register, deregister], current: lb("lb"), replaced: [] })).toBe(true);
    expect(onlyTargets({ operations: [], current: lb("lb"), replaced: [] })).toBe(true);
  });

  test("not before the load balancer exists, not while one is replaced, not with any other operation", () => {
    expect(onlyTargets({ operations: [register], replaced: [] })).toBe(false);
    expect(onlyTargets({ operations: [register], current: lb("lb"), replaced: [lb("old")] })).toBe(false);
    expect(onlyTargets({ operations: [register, createListener], current: lb("lb"), replaced: [] })).toBe(
      false,
    );
  });
});

describe("makeBeforeBreak", () => {
  const replacing = (state: string): Plan => ({
    operations: [createListener, register, deleteOld, deleteGroup, deleteSg],
    current: lb("new", state),
    replaced: [lb("old")],
  });

  test("while the successor provisions, the old load balancer and what it uses stay; the rest goes ahead", () => {
    expect(makeBeforeBreak(replacing("provisioning"))).toEqual({
      operations: [createListener, register],
      waitForActive: true,
    });
    // Not yet made at all: the same.
    const unmade: Plan = { ...replacing("provisioning") };
    delete unmade.current;
    expect(makeBeforeBreak(unmade).waitForActive).toBe(true);
  });

  test("once the successor is active, or when nothing is replaced, every operation goes", () => {
    const active = replacing("active");
    expect(makeBeforeBreak(active)).toEqual({ operations: active.operations, waitForActive: false });
    const plain: Plan = { operations: [deleteGroup], current: lb("lb", "provisioning"), replaced: [] };
    expect(makeBeforeBreak(plain)).toEqual({ operations: [deleteGroup], waitForActive: false });
  });
});
