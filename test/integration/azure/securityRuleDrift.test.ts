// Security rules changed by hand do not stay changed: the controller reads the cluster's network security group
// once every --security-rule-check-period, compares it with the rules each Service's last pass put in it, and
// reconciles the Services whose rules differ at once, with a Warning Event naming the rule. Rules are deleted and
// changed here as a user with the az CLI would, through the SDK against the emulator.
import { AZURE_WORLD, expect, mark, test, total, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { SECURITY_RULES_CHANGED } from "../../../controller/securityRuleCheck.ts";
import {
  azureWorld,
  lbService,
  patchService,
  serviceEvents,
  waitForIP,
  waitForServiceEvent,
} from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const RANGES = "service.beta.kubernetes.io/azure-allowed-ip-ranges";
/** The check's period in these tests (the controller's default is a minute). */
const CHECK_MS = 1000;
/** What the resync would take to find it: far beyond every wait here (the harness resyncs every minute). */
const RESTORED_WITHIN_MS = 15_000;
const FAST = { updateIntervalInMs: 20 };

test("a security rule deleted by hand from the network security group is restored within the check period, with a Warning Event naming it", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  const controller = await startPortico(cluster, { provider: "azure", securityRuleCheckPeriodMs: CHECK_MS });
  const svc = await cluster.createService("web", lbService(), { [RANGES]: "203.0.113.0/24" });
  await waitForIP(cluster, "web");
  const rg = azure.resourceGroup;
  const nsg = AZURE_WORLD.securityGroupName;
  await waitFor("the Service's rule", async () => (await inventory(azure)).securityRules.length === 1);
  const [rule] = (await inventory(azure)).securityRules;
  expect(rule!.name).toBe(`a${svc.metadata!.uid!.replace(/-/g, "")}-TCP-80`);
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  await (
    await mark(controller.metrics.securityRuleChecks, { outcome: "done" })
  )("a check of the settled Service");
  expect(await total(controller.metrics.securityRuleRepairs)).toBe(0);

  await azure.network.securityRules.beginDeleteAndWait(rg, nsg, rule!.name, FAST);
  expect((await inventory(azure)).securityRules).toEqual([]);
  const deletedAt = Date.now();
  await waitFor("the rule to be restored", async () => (await inventory(azure)).securityRules.length === 1, {
    timeoutMs: RESTORED_WITHIN_MS,
    intervalMs: 100,
  });
  expect(Date.now() - deletedAt).toBeLessThan(RESTORED_WITHIN_MS);
  const [restored] = (await inventory(azure)).securityRules;
  expect(restored).toEqual(rule);
  const told = await waitForServiceEvent(cluster, "web", "Warning", SECURITY_RULES_CHANGED);
  expect(told.message).toBe(
    `security rules Portico made were changed outside it: security rule ${rule!.name} is gone from network security group ${nsg}; restoring them now`,
  );
  expect(await total(controller.metrics.securityRuleRepairs, { how: "reconciled" })).toBe(1);

  // Widened by hand to everyone: put back as the Service asks.
  const now = await azure.network.securityRules.get(rg, nsg, rule!.name);
  await azure.network.securityRules.beginCreateOrUpdateAndWait(
    rg,
    nsg,
    rule!.name,
    { ...now, sourceAddressPrefix: "*", sourceAddressPrefixes: [] },
    FAST,
  );
  expect((await inventory(azure)).securityRules[0]!.sources).toEqual(["*"]);
  await waitFor(
    "the rule to admit the allowed range alone again",
    async () => (await inventory(azure)).securityRules[0]!.sources.join() === "203.0.113.0/24",
    { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
  );
  expect((await serviceEvents(cluster, "web")).map((e) => e.message)).toContain(
    `security rules Portico made were changed outside it: security rule ${rule!.name} was changed in network security group ${nsg}; restoring them now`,
  );
});

test("on a quiet cluster each check costs one read of the network security group, whatever the number of Services, and changes nothing", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  const controller = await startPortico(cluster, {
    provider: "azure",
    securityRuleCheckPeriodMs: CHECK_MS,
    resyncPeriodMs: 600_000,
    orphanCollectionPeriodMs: 600_000,
  });
  const names = ["a", "b", "c", "d", "e"];
  for (const [i, name] of names.entries())
    await cluster.createService(name, lbService([{ name: "http", port: 80 + i, targetPort: 8080 }]));
  for (const name of names) await waitForIP(cluster, name);
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  await (
    await mark(controller.metrics.securityRuleChecks, { outcome: "done" })
  )("a first check after the Services settled");
  await azure.clearRequests();
  const checksBefore = await total(controller.metrics.securityRuleChecks, { outcome: "done" });
  await (
    await mark(controller.metrics.securityRuleChecks, { outcome: "done" })
  )("five more checks", 5, {
    timeoutMs: 30_000,
  });
  const counts = await azure.requestCounts();
  const checks = (await total(controller.metrics.securityRuleChecks, { outcome: "done" })) - checksBefore;
  const made = Object.fromEntries(Object.entries(counts).filter(([op]) => !/ (token|discovery)$/.test(op)));
  // The check under way when the requests were cleared may be counted too.
  expect(Object.keys(made)).toEqual(["GET networkSecurityGroups"]);
  expect(made["GET networkSecurityGroups"]).toBeGreaterThanOrEqual(checks);
  expect(made["GET networkSecurityGroups"]).toBeLessThanOrEqual(checks + 1);
  for (const name of names)
    expect((await serviceEvents(cluster, name)).filter((e) => e.reason === SECURITY_RULES_CHANGED)).toEqual(
      [],
    );
});

test("Portico's own changes of the rules, made while checks run, are never told as changes made outside it", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  // Checks as often as the controller can make them, so that they meet Portico's writes.
  const controller = await startPortico(cluster, { provider: "azure", securityRuleCheckPeriodMs: 50 });
  await cluster.createService("web", lbService(), { [RANGES]: "203.0.113.0/24" });
  await cluster.createService("api", lbService([{ name: "http", port: 81, targetPort: 8081 }]));
  await waitForIP(cluster, "web");
  await waitForIP(cluster, "api");
  const checked = await mark(controller.metrics.securityRuleChecks, { outcome: "done" });
  for (const [i, range] of ["198.51.100.0/24", "192.0.2.0/24", "203.0.113.128/25"].entries()) {
    await patchService(cluster, "web", { metadata: { annotations: { [RANGES]: range } } });
    await patchService(cluster, "api", {
      spec: { loadBalancerSourceRanges: [range], ports: [{ name: "http", port: 81 + i, targetPort: 8081 }] },
    });
    await waitFor(`both Services' rules to admit ${range} alone`, async () => {
      const rules = (await inventory(azure)).securityRules;
      return rules.length === 2 && rules.every((r) => r.sources.join() === range);
    });
  }
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  await checked("ten checks, some while the rules were being written", 10);
  for (const name of ["web", "api"])
    expect((await serviceEvents(cluster, name)).filter((e) => e.reason === SECURITY_RULES_CHANGED)).toEqual(
      [],
    );
  expect(await total(controller.metrics.securityRuleRepairs)).toBe(0);
});
