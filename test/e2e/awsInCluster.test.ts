// The eks overlay's controller running in the cluster, as on EKS but against the AWS emulator: its image, its
// ServiceAccount and RBAC, leader election between its two pods, and the AWS SDK reaching the emulator from a
// pod (static test credentials stand in for IRSA or Pod Identity). A Service of class portico.io/aws-nlb
// with ip targets gets an NLB whose targets are the pods' addresses, and loses it when deleted.
import { onTestFinished } from "vitest";
import {
  DescribeTargetHealthCommand,
  DescribeTargetGroupsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { eksOnEmulator, nlbHostname } from "../harness/cloudEdge/eksOnEmulator.ts";
import { describe, expect, test, waitFor } from "../harness/e2e.ts";

describe("the eks overlay in the cluster", () => {
  test("its controller pods make an NLB with the pods as targets in the AWS emulator, and remove it", async ({
    ns,
  }) => {
    const { aws } = await eksOnEmulator(ns, { defer: onTestFinished });

    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer(
      "web",
      "echo",
      { loadBalancerClass: "portico.io/aws-nlb" },
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
    );
    const hostname = await nlbHostname(ns, "web");
    expect(hostname).toMatch(/elb\.amazonaws\.com$/);

    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    const podIps = pods.items.map((p) => p.status!.podIP!).sort();
    await waitFor(
      `the target group to hold the pods ${podIps.join(", ")}`,
      async () => {
        const groups = await aws.elbv2.send(new DescribeTargetGroupsCommand({}));
        const group = groups.TargetGroups?.[0];
        if (!group) throw new Error("no target group");
        const health = await aws.elbv2.send(
          new DescribeTargetHealthCommand({ TargetGroupArn: group.TargetGroupArn }),
        );
        const ips = (health.TargetHealthDescriptions ?? []).map((d) => d.Target!.Id!).sort();
        if (JSON.stringify(ips) === JSON.stringify(podIps) && group.TargetType === "ip") return true;
        throw new Error(`targets ${ips.join(", ")} (${group.TargetType})`);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    await ns.core.deleteNamespacedService({ name: "web", namespace: ns.name });
    await waitFor(
      "the NLB and its target groups to be deleted",
      async () => {
        const groups = await aws.elbv2.send(new DescribeTargetGroupsCommand({}));
        return (groups.TargetGroups ?? []).length === 0 || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });
});
