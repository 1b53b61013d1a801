// The bad-input corpus, Azure: every pair of settings that cannot work together (the provider's table) is refused
// with a Warning Event and a False condition naming both fields; nothing is made in ARM for it; and a healthy
// Service beside it keeps working.
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import type { Controller } from "../../../controller/app.ts";
import { AZURE_COMBINATIONS } from "../../../providers/azure/annotations/combinations.ts";
import { startPortico } from "../../harness/controller.ts";
import { expectRefused, TestAzure, TestCluster } from "../../harness/index.ts";
import { azureWorld, lbService, waitForIP } from "../azure/fixtures.ts";
import { inventory } from "../azure/inventory.ts";
import { combinationCases } from "./corpus.ts";

// The controller here configures no multipleStandardLoadBalancerConfigurations, as the examples that involve
// them assume.
const CASES = combinationCases(AZURE_COMBINATIONS);

describe("bad input, Azure", () => {
  let cluster: TestCluster;
  let azure: TestAzure;
  let controller: Controller;

  beforeAll(async () => {
    cluster = await TestCluster.create(inject("kubeconfig"), "bad-input-azure");
    azure = await TestAzure.fresh();
    await azureWorld(cluster, azure, 1);
    controller = await startPortico(cluster, { provider: "azure", workers: 8 });
    await cluster.createService("good", lbService());
    await waitForIP(cluster, "good");
  });
  afterAll(async () => {
    await cluster.cleanup();
  });

  test.for(CASES.map((c, i) => [c.name, c, i] as const))("%s", async ([, c, i]) => {
    const name = `bad-${i}`;
    const svc = await cluster.createService(name, lbService(c.spec?.ports, c.spec), c.annotations);
    await expectRefused(cluster, name, c);
    // Nothing in ARM names it: no frontend, rule or public IP carries its UID.
    const inv = JSON.stringify(await inventory(azure));
    expect(inv).not.toContain(svc.metadata!.uid!.replaceAll("-", ""));
    expect(inv).not.toContain(svc.metadata!.uid!);
    expect((await cluster.getService(name)).status?.loadBalancer?.ingress ?? []).toEqual([]);
    // The healthy Service beside it is untouched.
    expect((await cluster.getService("good")).status?.conditions?.[0]?.status).toBe("True");
    expect(controller.isLeader()).toBe(true);
  });
});
