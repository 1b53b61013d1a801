// A target Portico deregisters drains on the NLB as ELBv2 documents it: the connection a client already has goes on
// to the same pod, new connections go to the other targets, DescribeTargetHealth (and so `porticoctl status`) says
// `draining`; at the end of the target group's deregistration delay the connection is cut when the group's
// connection termination is on, and left alone when it is off.
import { onTestFinished } from "vitest";
import { DescribeTargetGroupsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { eksOnEmulator, nlbAddress, porticoctlStatus } from "../harness/cloudEdge/eksOnEmulator.ts";
import { HeldConnection } from "../harness/heldConnection.ts";
import { mergePatch } from "../harness/kube.ts";
import { clientGet, describe, expect, test, waitFor } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const DELAY_SECONDS = 15;

describe("draining on the NLB", () => {
  test("a deregistered pod keeps its open connection and gets no new one; the connection is cut at the delay's end only with connection termination", async ({
    ns,
  }) => {
    const {
      aws,
      edge: started,
      healthEndpoint,
    } = await eksOnEmulator(ns, {
      dataPlane: true,
      defer: onTestFinished,
    });
    const edge = started!;
    await ns.deployEcho("echo", 3);
    await ns.waitAvailable("echo");
    const service = (terminate: boolean) => ({
      [`${A}nlb-target-type`]: "ip",
      [`${A}healthcheck-interval`]: "5",
      [`${A}healthcheck-healthy-threshold`]: "2",
      [`${A}target-group-attributes`]: `deregistration_delay.timeout_seconds=${DELAY_SECONDS},deregistration_delay.connection_termination.enabled=${terminate}`,
    });
    await ns.createLoadBalancer("cut", "echo", { loadBalancerClass: "portico.io/aws-nlb" }, service(true));
    await ns.createLoadBalancer("keep", "echo", { loadBalancerClass: "portico.io/aws-nlb" }, service(false));
    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    const ipOf = new Map(pods.items.map((p) => [p.metadata!.name!, p.status!.podIP!]));
    const addresses = { cut: await nlbAddress(ns, edge, "cut"), keep: await nlbAddress(ns, edge, "keep") };
    for (const address of Object.values(addresses))
      await waitFor(
        `every pod to answer through ${address}`,
        async () => {
          const seen = new Set<string>();
          for (let i = 0; i < 15; i++) {
            const answer = await clientGet(ns.context, `http://${address}/`);
            if (answer) seen.add(answer.pod);
          }
          return seen.size === ipOf.size || undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );

    // One connection held to each NLB, both to the same pod (so that cutting one group's flows must leave the
    // other group's alone); that pod leaves the Service (its label changes) and goes on running, so Portico
    // deregisters its targets while it could still answer.
    const cut = await HeldConnection.open(ns.context.client.namespace, addresses.cut, 80);
    onTestFinished(() => cut.close());
    const first = await cut.get();
    if (!first.ok) throw new Error(`the held connection to ${addresses.cut}: ${first.error}`);
    const pod = first.pod;
    const keep = await waitFor(
      `a connection to ${addresses.keep} answered by ${pod}`,
      async () => {
        const held = await HeldConnection.open(ns.context.client.namespace, addresses.keep, 80);
        const answer = await held.get();
        if (answer.ok && answer.pod === pod) return held;
        held.close();
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    onTestFinished(() => keep.close());
    await ns.core.patchNamespacedPod(
      { name: pod, namespace: ns.name, body: { metadata: { labels: { app: "echo-retired" } } } },
      mergePatch,
    );

    const groups = (await aws.elbv2.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
    const drainingIn = (g: (typeof groups)[number]) =>
      edge.drainingIn(g.TargetGroupArn!).some((d) => d.ip === ipOf.get(pod));
    const draining = () => groups.filter(drainingIn).length;
    await waitFor("the pod's target to drain in both groups", () => draining() === 2 || undefined, {
      timeoutMs: 60_000,
      intervalMs: 250,
    });

    // While they drain: the held connections still reach their pods; new connections never do.
    expect(await cut.get()).toEqual({ ok: true, pod });
    expect(await keep.get()).toEqual({ ok: true, pod });
    for (const [name, address] of Object.entries(addresses))
      for (let i = 0; i < 10; i++) {
        const answer = await clientGet(ns.context, `http://${address}/`);
        expect(answer, `a new connection to ${name}`).toBeDefined();
        expect(answer!.pod).not.toBe(pod);
      }

    // What a user's tools see, through ELBv2's DescribeTargetHealth: the target draining, with ELBv2's reason.
    const out = await porticoctlStatus(ns, healthEndpoint!);
    expect(out).toContain(`${ipOf.get(pod)}:8080 draining (Target deregistration is in progress)`);

    // The delay ends: the connection to the group with connection termination is cut; the other goes on.
    await waitFor(
      "the held connection to the terminating group to be cut",
      async () => {
        const answer = await cut.get();
        return !answer.ok || undefined;
      },
      { timeoutMs: (DELAY_SECONDS + 60) * 1000, intervalMs: 1000 },
    );
    await waitFor("the other drain to end", () => draining() === 0 || undefined, {
      timeoutMs: (DELAY_SECONDS + 60) * 1000,
      intervalMs: 500,
    });
    expect(await keep.get()).toEqual({ ok: true, pod });
  });
});
