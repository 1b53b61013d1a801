// NLB instance targets carry packets: the local cluster's nodes are the emulator's EC2 instances (their
// providerIDs name them), Portico registers them on their node ports and opens those ports to the NLB's security
// group in the nodes' group, and the edge checks and forwards as ELBv2 does — kube-proxy on each node passing the
// traffic on, and with `Local` answering the health check only where a pod runs. The nodes' group is enforced as
// EC2 does: without Portico's rule, health checks and traffic are dropped, until Portico's next reconcile finds
// the targets failing and restores it.
import { onTestFinished } from "vitest";
import { DescribeSecurityGroupsCommand, RevokeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
import { eksOnEmulator, nlbAddress, nlbHostname } from "../harness/cloudEdge/eksOnEmulator.ts";
import { mergePatch } from "../harness/kube.ts";
import { clientGet, clientStatus, describe, expect, test, waitFor } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
// Checks every 5 s, healthy after 2 passes, so that the test waits seconds rather than half a minute.
const QUICK_CHECKS = { [`${A}healthcheck-interval`]: "5", [`${A}healthcheck-healthy-threshold`]: "2" };
const NLB = { loadBalancerClass: "portico.io/aws-nlb" };

describe("NLB instance targets on the local cluster", () => {
  test("Cluster: every node forwards to the pods; Local: only nodes running a pod pass the health check and get traffic", async ({
    ns,
  }) => {
    const { edge: started, instances } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("web", "echo", NLB, QUICK_CHECKS);
    await ns.createLoadBalancer("local", "echo", { ...NLB, externalTrafficPolicy: "Local" }, QUICK_CHECKS);

    // Every node is a target on the node port, and passes its TCP check: kube-proxy forwards from any of them.
    const web = await nlbHostname(ns, "web");
    const webUrl = `http://${await nlbAddress(ns, edge, "web")}/`;
    const ids = instances.map((i) => i.instanceId).sort();
    await waitFor(
      "every node to be a healthy target of web",
      () => {
        const targets = edge.targetsOf(web);
        const healthy = targets.filter((t) => t.state === "healthy").map((t) => t.id);
        if (JSON.stringify(healthy.sort()) === JSON.stringify(ids)) return true;
        throw new Error(JSON.stringify(targets));
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const pods = (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" })).items;
    const seen = new Set<string>();
    await waitFor(
      "both pods to answer through the NLB",
      async () => {
        const answer = await clientGet(ns.context, webUrl);
        if (answer) seen.add(answer.pod);
        return seen.size === pods.length || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    // Local: kube-proxy's /healthz on the healthCheckNodePort passes only on nodes with a pod.
    const local = await nlbHostname(ns, "local");
    const localUrl = `http://${await nlbAddress(ns, edge, "local")}/`;
    const podNodes = new Set(pods.map((p) => p.spec!.nodeName!));
    const expected = Object.fromEntries(
      instances.map((i) => [i.instanceId, podNodes.has(i.node) ? "healthy" : "unhealthy"]),
    );
    expect(Object.values(expected)).toContain("unhealthy");
    await waitFor(
      "the Local Service's checks to pass exactly on the nodes running a pod",
      () => {
        const now = Object.fromEntries(edge.targetsOf(local).map((t) => [t.id, t.state]));
        if (
          JSON.stringify(now, Object.keys(expected).sort()) ===
          JSON.stringify(expected, Object.keys(expected).sort())
        )
          return true;
        throw new Error(JSON.stringify(now));
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // Answered once first: the LAN's client may still hold a neighbour entry for this address from an earlier
    // test's edge (every edge hands out the same addresses, with a new MAC), which it takes seconds to re-learn.
    await waitFor(
      "the Local Service to answer",
      async () => (await clientGet(ns.context, localUrl)) ?? undefined,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    const failed: string[] = [];
    for (let i = 0; i < 20; i++)
      if (!(await clientGet(ns.context, localUrl))) failed.push(`${i}: ${await edge.describe()}`);
    expect(failed).toEqual([]);
  });

  test("the nodes' security group: without Portico's rule for the NLB, checks and traffic are dropped; the next reconcile says so and puts the rule back", async ({
    ns,
  }) => {
    const { aws, edge, nodeSecurityGroup } = await eksOnEmulator(ns, {
      dataPlane: true,
      defer: onTestFinished,
    });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("web", "echo", NLB, QUICK_CHECKS);
    const url = `http://${await nlbAddress(ns, edge!, "web")}/`;
    await waitFor(
      "the pod to answer through the NLB",
      async () => (await clientGet(ns.context, url)) ?? undefined,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );

    // The rules Portico added to the nodes' group, removed by hand.
    const rules = async () =>
      (await aws.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [nodeSecurityGroup] })))
        .SecurityGroups![0]!.IpPermissions ?? [];
    const added = await rules();
    expect(added.flatMap((p) => p.UserIdGroupPairs ?? []).length).toBeGreaterThan(0);
    await aws.ec2.send(
      new RevokeSecurityGroupIngressCommand({ GroupId: nodeSecurityGroup, IpPermissions: added }),
    );
    // Nothing answers now: the edge applies the group within a pass or two, dropping the NLB's flows (and the
    // health checks, so the targets fail them too). Portico does not watch security groups.
    await waitFor("the traffic to be dropped", async () => (await clientStatus(ns.context, url)) === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });

    const hostname = await nlbHostname(ns, "web");
    await waitFor(
      "every target to fail its health checks",
      () => edge!.targetsOf(hostname).every((t) => t.state === "unhealthy"),
      { timeoutMs: 90_000, intervalMs: 500 },
    );

    // The next reconcile (here asked for by a change to the Service; the periodic resync does the same) finds
    // the targets failing their checks, says so, reads the nodes' group again and puts Portico's rule back.
    const touch = { metadata: { annotations: { "example.com/touched": "1" } } };
    await ns.core.patchNamespacedService({ name: "web", namespace: ns.name, body: touch }, mergePatch);
    const down = await ns.waitForServing("web", "False", 120_000);
    expect(down.reason).toBe("TargetsUnhealthy");
    await waitFor("the pod to answer again", async () => (await clientGet(ns.context, url)) ?? undefined, {
      timeoutMs: 180_000,
      intervalMs: 500,
    });
    const restored = (await rules()).flatMap((p) => p.UserIdGroupPairs ?? []).map((g) => g.GroupId);
    expect(restored.sort()).toEqual(
      added
        .flatMap((p) => p.UserIdGroupPairs ?? [])
        .map((g) => g.GroupId)
        .sort(),
    );
    await ns.waitForServing("web", "True", 120_000);
  });
});
