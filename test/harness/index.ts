import { inject, test as base } from "vitest";
import { TestAws } from "./aws.ts";
import { TestCluster } from "./kube.ts";

export { waitFor } from "./wait.ts";
export { TestCluster, TEST_NODE_LABEL, mergePatch } from "./kube.ts";
export type { NodeSpec, EndpointSpec } from "./kube.ts";
export { TestAws } from "./aws.ts";
export type { TestInstance, TestNetwork } from "./aws.ts";

/**
 * The integration test API. `cluster` is a fresh namespace on the real apiserver (Nodes the test creates are
 * removed afterwards); `aws` is an emptied AWS account on this worker's emulator. Fixtures are made only for
 * the tests that ask for them.
 */
export const test = base.extend<{ cluster: TestCluster; aws: TestAws }>({
  cluster: async ({ task }, use) => {
    const cluster = await TestCluster.create(inject("kubeconfig"), task.name);
    await use(cluster);
    await cluster.cleanup();
  },
  // eslint-disable-next-line no-empty-pattern -- vitest reads fixture dependencies from this destructuring
  aws: async ({}, use) => {
    await use(await TestAws.fresh());
  },
});

export { expect, describe } from "vitest";
