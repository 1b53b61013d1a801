// A security rule changed by hand cuts a client off only until the controller's security-rule check (every
// minute, the image's default --security-rule-check-period) finds it and Portico restores it: measured by packets,
// from the LAN's client through the emulated cloud edges, which enforce the NLB's security group and the NSG.
// Before the check, the rule stayed revoked for up to an hour on AWS and until the resync (ten minutes) on Azure.
import { onTestFinished } from "vitest";
import { DescribeSecurityGroupsCommand, RevokeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
import { eksOnEmulator, nlbAddress } from "../harness/cloudEdge/eksOnEmulator.ts";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { AZURE_WORLD } from "../harness/azure.ts";
import {
  clientGet,
  clientStatus,
  describe,
  expect,
  test,
  waitFor,
  type E2eNamespace,
} from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
/** The controller's default check period, and what a repair may take beyond it (the pass, the edge's next look). */
const PERIOD_MS = 60_000;
const REPAIR_MS = 45_000;

/**
 * The client answered through `url`; `revoke` run; the client cut off; then answered again. Returns how long the
 * client was cut off (from the revoke to the first answer again), in milliseconds.
 */
async function cutOffFor(ns: E2eNamespace, url: string, revoke: () => Promise<void>): Promise<number> {
  await waitFor("the client to be answered", async () => (await clientGet(ns.context, url)) ?? undefined, {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  await revoke();
  const revokedAt = Date.now();
  await waitFor("the client to be cut off", async () => (await clientStatus(ns.context, url, 1)) === 0, {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  await waitFor(
    "the client to be answered again",
    async () => (await clientGet(ns.context, url)) ?? undefined,
    // Well short of the resync (ten minutes) and of AWS's full observation (an hour).
    { timeoutMs: PERIOD_MS + REPAIR_MS + 60_000, intervalMs: 250 },
  );
  return Date.now() - revokedAt;
}

async function securityEvents(ns: E2eNamespace, name: string): Promise<string[]> {
  const list = await ns.core.listNamespacedEvent({
    namespace: ns.name,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.filter((e) => e.reason === "SecurityRulesChanged").map((e) => e.message ?? "");
}

describe("security rules changed by hand are restored within the check period", () => {
  test("AWS: the client's ingress rule revoked from the NLB's security group", async ({ ns }) => {
    const { aws, edge } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    const client = `${ns.context.client.ipv4}/32`;
    await ns.createLoadBalancer(
      "web",
      "echo",
      { loadBalancerClass: "portico.io/aws-nlb", loadBalancerSourceRanges: [client] },
      { [`${A}nlb-target-type`]: "ip", [`${A}healthcheck-interval`]: "5" },
    );
    const url = `http://${await nlbAddress(ns, edge!, "web")}/`;
    const groups = await aws.ec2.send(
      new DescribeSecurityGroupsCommand({
        Filters: [{ Name: "tag:portico.io/service", Values: [`${ns.name}/web`] }],
      }),
    );
    const [own] = groups.SecurityGroups ?? [];
    const ms = await cutOffFor(ns, url, async () => {
      // As `aws ec2 revoke-security-group-ingress --group-id … --protocol tcp --port 80 --cidr …` would.
      await aws.ec2.send(
        new RevokeSecurityGroupIngressCommand({
          GroupId: own!.GroupId!,
          IpPermissions: [{ IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: client }] }],
        }),
      );
    });
    console.log(`AWS: the client was cut off for ${(ms / 1000).toFixed(1)} s after its rule was revoked`);
    expect(ms).toBeLessThan(PERIOD_MS + REPAIR_MS);
    expect(await securityEvents(ns, "web")).toEqual([
      `security rules Portico made were changed outside it: ingress tcp/80 from ${client} is gone from the NLB's security group ${own!.GroupId}; restoring them now`,
    ]);
  });

  test("Azure: the Service's rule deleted from the network security group", async ({ ns }) => {
    const { azure } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    const svc = await ns.createLoadBalancer("web", "echo", {
      loadBalancerClass: AKS_CLASS,
      loadBalancerSourceRanges: [`${ns.context.client.ipv4}/32`],
    });
    const url = `http://${await ns.waitForAddress("web", 120_000)}/`;
    const rule = `a${svc.metadata!.uid!.replace(/-/g, "")}-TCP-80`;
    const nsg = AZURE_WORLD.securityGroupName;
    const ms = await cutOffFor(ns, url, async () => {
      // As `az network nsg rule delete --nsg-name … --name …` would.
      await azure.network.securityRules.beginDeleteAndWait(azure.resourceGroup, nsg, rule, {
        updateIntervalInMs: 200,
      });
    });
    console.log(`Azure: the client was cut off for ${(ms / 1000).toFixed(1)} s after its rule was deleted`);
    expect(ms).toBeLessThan(PERIOD_MS + REPAIR_MS);
    expect(await securityEvents(ns, "web")).toEqual([
      `security rules Portico made were changed outside it: security rule ${rule} is gone from network security group ${nsg}; restoring them now`,
    ]);
  });
});
