import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import type { LoadBalancerIntent } from "../providers/provider.ts";
import { DRAIN_WARNING, DrainWarnings, drainWarning, graceOf } from "./drainWarning.ts";

const drain = { seconds: 300, setting: "the target groups' deregistration delay" };

describe("the drain Warning", () => {
  test("warns when the pod is given less time than the load balancer drains, naming both figures", () => {
    const w = drainWarning(drain, "web-1", 30);
    expect(w).toMatchObject({ type: "Warning", reason: DRAIN_WARNING });
    expect(w?.message).toContain("pod web-1 is given 30 s to stop");
    expect(w?.message).toContain(
      "drains its connections for 300 s (the target groups' deregistration delay)",
    );
    expect(drainWarning(drain, "web-1", 300)).toBeUndefined();
    expect(drainWarning(drain, "web-1", 600)).toBeUndefined();
  });

  test("the grace a stopping pod was given: the deletion's, else its spec's, else Kubernetes' 30 s", () => {
    expect(
      graceOf({
        metadata: { deletionGracePeriodSeconds: 5 },
        spec: { terminationGracePeriodSeconds: 60, containers: [] },
      }),
    ).toBe(5);
    expect(graceOf({ spec: { terminationGracePeriodSeconds: 60, containers: [] } })).toBe(60);
    expect(graceOf({})).toBe(30);
  });

  test("each stopping pod is read once; the same figures are told once per Service", async () => {
    const reads: string[] = [];
    const core = {
      readNamespacedPod: ({ name }: { name: string }): Promise<V1Pod> => {
        reads.push(name);
        return Promise.resolve({
          metadata: { name, deletionGracePeriodSeconds: name === "slow" ? 600 : 30 },
        });
      },
    } as unknown as CoreV1Api;
    const warnings = new DrainWarnings(core);
    const intent = (...pods: string[]) =>
      ({
        service: { namespace: "ns", name: "web", uid: "u1" },
        drainingEndpoints: pods.map((pod, i) => ({ ip: `10.0.0.${i + 1}`, ports: {}, pod })),
      }) as unknown as LoadBalancerIntent;
    expect(await warnings.check(intent("a"), drain)).toMatchObject({ reason: DRAIN_WARNING });
    expect(await warnings.check(intent("a"), drain)).toBeUndefined();
    // Another pod with the same figures: read, not told again. A pod given enough: read, nothing to tell.
    expect(await warnings.check(intent("a", "b", "slow"), drain)).toBeUndefined();
    expect(reads).toEqual(["a", "b", "slow"]);
    // Nothing draining behind pods (instance targets): nothing read.
    expect(await warnings.check(intent("c"), undefined)).toBeUndefined();
    expect(reads).toEqual(["a", "b", "slow"]);
  });
});
