// The local cluster runs on the test machine without changing it: with three nodes running kubelet,
// containerd, kube-proxy and Portico, the machine's own sysctls, interfaces, routes and packet filter are
// what they were before it started (the suite's teardown checks the same once everything has stopped).
import { inject } from "vitest";
import { describe, expect, test } from "../harness/e2e.ts";
import { hostChanges, hostState } from "../harness/localCluster/hostState.ts";

describe("the machine the cluster runs on", () => {
  test("keeps its sysctls, interfaces, routes and packet filter while the cluster runs", async () => {
    const before = inject("e2e").hostBefore!;
    expect(Object.keys(before).length).toBeGreaterThan(10);
    expect(hostChanges(before, await hostState())).toEqual([]);
  });
});
