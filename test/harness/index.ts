import { inject, test as base } from "vitest";
import { TestAws } from "./aws.ts";
import { TestAzure } from "./azure.ts";
import { TestCluster } from "./kube.ts";

export { waitFor } from "./wait.ts";
export { mark, total } from "./evidence.ts";
export { expectRefused, readyCondition, waitForNotReady, waitForServing } from "./conditions.ts";
export type { FailureCondition } from "./conditions.ts";
export { TestCluster, TEST_NODE_LABEL, mergePatch } from "./kube.ts";
export type { NodeSpec, EndpointSpec } from "./kube.ts";
export { TestAws } from "./aws.ts";
export type { TestInstance, TestNetwork } from "./aws.ts";
export { TestAzure, AZURE_CLASS, AZURE_WORLD } from "./azure.ts";

/**
 * The integration test API. `cluster` is a fresh namespace on the real apiserver (Nodes the test creates are
 * removed afterwards); `aws` is an emptied AWS account on this worker's emulator. Fixtures are made only for
 * the tests that ask for them. `azure` is an emptied subscription on this worker's Azure emulator, seeded with the
 * cluster's resource group, virtual network and network security group.
 */
export const test = base.extend<{ cluster: TestCluster; aws: TestAws; azure: TestAzure }>({
  cluster: async ({ task }, use) => {
    const cluster = await TestCluster.create(inject("kubeconfig"), task.name);
    await use(cluster);
    await cluster.cleanup();
  },
  // eslint-disable-next-line no-empty-pattern -- vitest reads fixture dependencies from this destructuring
  aws: async ({}, use) => {
    await use(await TestAws.fresh());
  },
  // eslint-disable-next-line no-empty-pattern -- vitest reads fixture dependencies from this destructuring
  azure: async ({}, use) => {
    await use(await TestAzure.fresh());
  },
});

export { expect, describe } from "vitest";
