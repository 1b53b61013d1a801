// What a Service reports about its load balancer: Portico's portico.io/LoadBalancerReady condition, waiting for it
// to say that the Service could not be served and why, and checking a refusal the way users see it.
import type { V1Condition } from "@kubernetes/client-node";
import { expect } from "vitest";
import { READY_CONDITION, SERVING_CONDITION } from "../../controller/status.ts";
import type { TestCluster } from "./kube.ts";
import { waitFor, type WaitOptions } from "./wait.ts";

/** A condition that says why: `reason` and `message` are always set on one Portico writes False. */
export type FailureCondition = V1Condition & { status: "False"; reason: string; message: string };

export async function readyCondition(cluster: TestCluster, name: string): Promise<V1Condition | undefined> {
  const svc = await cluster.getService(name);
  return svc.status?.conditions?.find((c) => c.type === READY_CONDITION);
}

/** Waits until Service `name`'s LoadBalancerReady condition is False, and returns it. */
export async function waitForNotReady(
  cluster: TestCluster,
  name: string,
  options?: WaitOptions,
): Promise<FailureCondition> {
  return waitFor(
    `Service ${name} to report LoadBalancerReady False`,
    async () => {
      const c = await readyCondition(cluster, name);
      return c?.status === "False" ? (c as FailureCondition) : undefined;
    },
    options,
  );
}

/**
 * Waits for Service `name` to be refused and checks it: the condition's reason, its message containing each of
 * `mentions` (the field, and where one applies the fix), and a Warning Event with the same reason and message.
 */
export async function expectRefused(
  cluster: TestCluster,
  name: string,
  { reason, mentions }: { reason: string; mentions: readonly string[] },
): Promise<FailureCondition> {
  const condition = await waitForNotReady(cluster, name);
  expect(condition.reason).toBe(reason);
  for (const text of mentions) expect(condition.message).toContain(text);
  const events = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  expect(events.items.map((e) => ({ type: e.type, reason: e.reason, message: e.message }))).toContainEqual({
    type: "Warning",
    reason,
    message: condition.message,
  });
  return condition;
}

/**
 * Waits until Service `name`'s Serving condition is True: its targets passed their health checks, so the
 * controller has stopped looking again and the status holds still.
 */
export async function waitForServing(
  cluster: TestCluster,
  name: string,
  options?: WaitOptions,
): Promise<void> {
  await waitFor(
    `Service ${name} to report Serving True`,
    async () =>
      (await cluster.getService(name)).status?.conditions?.find((c) => c.type === SERVING_CONDITION)
        ?.status === "True",
    options,
  );
}
