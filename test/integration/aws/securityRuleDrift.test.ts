// Security rules changed by hand do not stay changed: the controller compares the rules Portico made (the NLB's own
// security group, the shared rules on the nodes' group, the backend rules of an NLB without groups) with EC2 every
// --security-rule-check-period, for the whole cluster in one DescribeSecurityGroups and one
// DescribeSecurityGroupRules, restores what differs and says so in a Warning Event naming the rule. Rules are
// revoked here as a user with the aws CLI would, through the SDK against the emulator.
import { AuthorizeSecurityGroupIngressCommand, RevokeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
import { expect, mark, test, total, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { AwsProvider } from "../../../providers/aws/provider.ts";
import { SECURITY_RULES_CHANGED } from "../../../controller/securityRuleCheck.ts";
import {
  awsWorld,
  lbService,
  patchService,
  serviceEvents,
  waitForHostname,
  waitForServiceEvent,
} from "./fixtures.ts";
import { groupRules, inventory, sharedGroups } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const MUTATING = /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;
/** The check's period in these tests (the controller's default is a minute). */
const CHECK_MS = 1000;
/** What the resync would take to find it: far beyond every wait here (the harness resyncs every minute). */
const RESTORED_WITHIN_MS = 15_000;

test("an ingress rule revoked by hand from the NLB's security group is restored within the check period, with a Warning Event naming it", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 2);
  const controller = await startPortico(cluster, { securityRuleCheckPeriodMs: CHECK_MS });
  await cluster.createService("web", lbService(undefined, { loadBalancerSourceRanges: ["192.0.2.0/24"] }));
  await waitForHostname(cluster, "web");
  const [own] = (await inventory(aws)).securityGroups;
  expect(own!.ingress).toEqual(["tcp/80/192.0.2.0/24"]);
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const checked = await mark(controller.metrics.securityRuleChecks, { outcome: "done" });
  await checked("a check of the settled Service");
  expect(await total(controller.metrics.securityRuleRepairs)).toBe(0);

  await aws.ec2.send(
    new RevokeSecurityGroupIngressCommand({
      GroupId: own!.id,
      IpPermissions: [
        { IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: "192.0.2.0/24" }] },
      ],
    }),
  );
  const revokedAt = Date.now();
  expect((await inventory(aws)).securityGroups[0]!.ingress).toEqual([]);
  await waitFor(
    "the rule to be restored",
    async () => (await inventory(aws)).securityGroups[0]!.ingress.length === 1,
    { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
  );
  expect(Date.now() - revokedAt).toBeLessThan(RESTORED_WITHIN_MS);
  expect((await inventory(aws)).securityGroups[0]!.ingress).toEqual(["tcp/80/192.0.2.0/24"]);
  const told = await waitForServiceEvent(cluster, "web", "Warning", SECURITY_RULES_CHANGED);
  expect(told.message).toBe(
    `security rules Portico made were changed outside it: ingress tcp/80 from 192.0.2.0/24 is gone from the NLB's security group ${own!.id}; restoring them now`,
  );
  expect(await total(controller.metrics.securityRuleRepairs, { how: "reconciled" })).toBe(1);

  // A rule added by hand to Portico's own group opens the NLB to more than the Service asks: it goes too.
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: own!.id,
      IpPermissions: [{ IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: "0.0.0.0/0" }] }],
    }),
  );
  await waitFor(
    "the rule added by hand to be revoked",
    async () => (await inventory(aws)).securityGroups[0]!.ingress.join() === "tcp/80/192.0.2.0/24",
    { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
  );
  expect((await serviceEvents(cluster, "web")).map((e) => e.message)).toContain(
    `security rules Portico made were changed outside it: ingress tcp/80 from 0.0.0.0/0 was added to the NLB's security group ${own!.id}; restoring them now`,
  );
});

test("the nodes' shared rule revoked by hand is restored by the check itself, and every Service relying on it is told", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  await awsWorld(cluster, aws, 2, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const controller = await startPortico(cluster, { securityRuleCheckPeriodMs: CHECK_MS });
  const web = await cluster.createService("web", lbService());
  await cluster.createService("api", lbService([{ name: "http", port: 8443, targetPort: 8443 }]));
  await waitForHostname(cluster, "web");
  await waitForHostname(cluster, "api");
  const shared = (await sharedGroups(aws))[0]!.id;
  const admitting = async () => (await groupRules(aws, nodeGroup)).filter((r) => r.rule.endsWith(shared));
  await waitFor("one shared range on the nodes' group", async () => (await admitting()).length === 1);
  const [range] = await admitting();
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);

  const { DescribeSecurityGroupRulesCommand } = await import("@aws-sdk/client-ec2");
  const ruleId = (
    await aws.ec2.send(
      new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [nodeGroup] }] }),
    )
  ).SecurityGroupRules!.find((r) => r.ReferencedGroupInfo?.GroupId === shared)!.SecurityGroupRuleId!;
  await aws.ec2.send(
    new RevokeSecurityGroupIngressCommand({ GroupId: nodeGroup, SecurityGroupRuleIds: [ruleId] }),
  );
  expect(await admitting()).toEqual([]);
  await waitFor("the shared range to be restored", async () => (await admitting()).length === 1, {
    timeoutMs: RESTORED_WITHIN_MS,
    intervalMs: 100,
  });
  expect((await admitting()).map((r) => r.rule)).toEqual([range!.rule]);
  const port = web.spec!.ports![0]!.nodePort!;
  const told = await waitForServiceEvent(cluster, "web", "Warning", SECURITY_RULES_CHANGED);
  expect(told.message).toBe(
    `security rules Portico made were changed outside it: ${nodeGroup} no longer admits the NLBs' shared group ${shared} on tcp/${port}; restored`,
  );
  await waitForServiceEvent(cluster, "api", "Warning", SECURITY_RULES_CHANGED);
  expect(await total(controller.metrics.securityRuleRepairs, { how: "restored" })).toBe(2);
});

test("a backend rule of an NLB without security groups, revoked by hand, is restored", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const controller = await startPortico(cluster, { securityRuleCheckPeriodMs: CHECK_MS });
  const svc = await cluster.createService(
    "web",
    lbService(undefined, { loadBalancerSourceRanges: ["192.0.2.0/24"] }),
    {
      [`${A}disable-nlb-sg`]: "true",
    },
  );
  await waitForHostname(cluster, "web");
  const traffic = `tcp/${svc.spec!.ports![0]!.nodePort}/192.0.2.0/24`;
  await waitFor("the backend rule", async () =>
    (await groupRules(aws, nodeGroup)).some((r) => r.rule === traffic),
  );
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const before = (await groupRules(aws, nodeGroup)).map((r) => r.rule);

  await aws.ec2.send(
    new RevokeSecurityGroupIngressCommand({
      GroupId: nodeGroup,
      IpPermissions: [
        {
          IpProtocol: "tcp",
          FromPort: svc.spec!.ports![0]!.nodePort!,
          ToPort: svc.spec!.ports![0]!.nodePort!,
          IpRanges: [{ CidrIp: "192.0.2.0/24" }],
        },
      ],
    }),
  );
  await waitFor(
    "the backend rule to be restored",
    async () => (await groupRules(aws, nodeGroup)).some((r) => r.rule === traffic),
    { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
  );
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(before);
  const told = await waitForServiceEvent(cluster, "web", "Warning", SECURITY_RULES_CHANGED);
  expect(told.message).toBe(
    `security rules Portico made were changed outside it: backend rule tcp/${svc.spec!.ports![0]!.nodePort} from 192.0.2.0/24 is gone from ${nodeGroup}; restoring them now`,
  );
});

test("on a quiet cluster each check costs one DescribeSecurityGroups and one DescribeSecurityGroupRules, whatever the number of Services, and changes nothing", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 2);
  const controller = await startPortico(cluster, {
    securityRuleCheckPeriodMs: CHECK_MS,
    resyncPeriodMs: 600_000,
    orphanCollectionPeriodMs: 600_000,
  });
  const names = ["a", "b", "c", "d", "e"];
  for (const [i, name] of names.entries())
    await cluster.createService(name, lbService([{ name: "http", port: 80 + i, targetPort: 8080 }]));
  for (const name of names) await waitForHostname(cluster, name);
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const checked = await mark(controller.metrics.securityRuleChecks, { outcome: "done" });
  await checked("a first check after the Services settled");
  const calls = (controller.provider as AwsProvider).clients.calls;
  const before = new Map(calls);
  const checksBefore = await total(controller.metrics.securityRuleChecks, { outcome: "done" });
  const more = await mark(controller.metrics.securityRuleChecks, { outcome: "done" });
  await more("five more checks", 5, { timeoutMs: 30_000 });
  const checks = (await total(controller.metrics.securityRuleChecks, { outcome: "done" })) - checksBefore;
  const made = Object.fromEntries(
    [...calls].map(([op, n]) => [op, n - (before.get(op) ?? 0)] as const).filter(([, n]) => n > 0),
  );
  // A check made while another's read was a moment old shares it: at most one of each per check, for five Services.
  expect(Object.keys(made).sort()).toEqual(["ec2:DescribeSecurityGroupRules", "ec2:DescribeSecurityGroups"]);
  expect(made["ec2:DescribeSecurityGroups"]).toBeLessThanOrEqual(checks + 1);
  expect(made["ec2:DescribeSecurityGroupRules"]).toBeLessThanOrEqual(checks + 1);
  expect(Object.keys(made).filter((op) => MUTATING.test(op))).toEqual([]);
  for (const name of names)
    expect((await serviceEvents(cluster, name)).filter((e) => e.reason === SECURITY_RULES_CHANGED)).toEqual(
      [],
    );
});

test("Portico's own changes of the rules, made while checks run, are never told as changes made outside it", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  await awsWorld(cluster, aws, 2, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  // Checks as often as the controller can make them, so that they meet Portico's writes.
  const controller = await startPortico(cluster, { securityRuleCheckPeriodMs: 50 });
  await cluster.createService("web", lbService(undefined, { loadBalancerSourceRanges: ["192.0.2.0/24"] }));
  await cluster.createService("bare", lbService([{ name: "http", port: 81, targetPort: 8081 }]), {
    [`${A}disable-nlb-sg`]: "true",
  });
  await waitForHostname(cluster, "web");
  await waitForHostname(cluster, "bare");
  const checked = await mark(controller.metrics.securityRuleChecks, { outcome: "done" });
  for (const [i, range] of ["198.51.100.0/24", "203.0.113.0/24", "192.0.2.0/25"].entries()) {
    await patchService(cluster, "web", { spec: { loadBalancerSourceRanges: [range] } });
    await patchService(cluster, "bare", {
      spec: {
        loadBalancerSourceRanges: [range],
        ports: [{ name: "http", port: 81 + i, targetPort: 8081 + i }],
      },
    });
    await waitFor(`web's group to admit ${range}`, async () =>
      (await inventory(aws)).securityGroups.some((g) => g.ingress.join() === `tcp/80/${range}`),
    );
    await waitFor(`bare's backend rules to admit ${range}`, async () =>
      (await groupRules(aws, nodeGroup)).some((r) => r.rule.endsWith(`/${range}`)),
    );
  }
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  await checked("ten checks, some while the rules were being written", 10);
  for (const name of ["web", "bare"])
    expect((await serviceEvents(cluster, name)).filter((e) => e.reason === SECURITY_RULES_CHANGED)).toEqual(
      [],
    );
  expect(await total(controller.metrics.securityRuleRepairs)).toBe(0);
});
