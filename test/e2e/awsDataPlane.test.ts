// The NLB carries packets: a client on the LAN reaches the pods through the NLB Portico configured in the AWS
// emulator, by the address the emulated edge gives it (test/harness/cloudEdge/), as the eks overlay's controller in
// the cluster keeps the target group in step with the pods. Health checks run against the real pods as the target
// group describes them and steer the traffic: a registered target that fails them gets none.
import { onTestFinished } from "vitest";
import { DescribeTargetGroupsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { eksOnEmulator, nlbAddress, porticoctlStatus } from "../harness/cloudEdge/eksOnEmulator.ts";
import { onlyAdmittedClientsAnswered } from "../harness/cloudEdge/sourceRanges.ts";
import { INJECT_LABELS, OPT_OUT_VALUE } from "../../controller/readinessGates/gates.ts";
import { clientDatagram, clientGet, clientStatus, describe, expect, test, waitFor } from "../harness/e2e.ts";
import { mergePatch } from "../harness/kube.ts";
import { SERVING_CONDITION } from "../../shared/conditions.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

describe("the NLB's data path on the local cluster", () => {
  test("HTTP from the LAN reaches the pods through the NLB; a target failing its health checks gets no request; no pod: refused, then served again", async ({
    ns,
  }) => {
    const { aws, edge: started } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;

    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer(
      "web",
      "echo",
      { loadBalancerClass: "portico.io/aws-nlb" },
      // Checks every 5 s, healthy after 2 passes, so that the test waits seconds rather than half a minute.
      {
        [`${A}nlb-target-type`]: "ip",
        [`${A}healthcheck-interval`]: "5",
        [`${A}healthcheck-healthy-threshold`]: "2",
      },
    );
    const url = `http://${await nlbAddress(ns, edge, "web")}/`;

    // Both pods answer through the NLB once their targets pass their checks.
    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    const names = pods.items.map((p) => p.metadata!.name!).sort();
    const seen = new Set<string>();
    await waitFor(
      "both pods to answer through the NLB",
      async () => {
        const answer = await clientGet(ns.context, url);
        if (answer) seen.add(answer.pod);
        return seen.size === names.length || undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect([...seen].sort()).toEqual(names);

    // A pod Kubernetes calls ready that answers nothing on the Service's port: Portico registers it like the others
    // (it is an endpoint), the NLB's own checks fail it, so it is never sent a request (were the checks ignored,
    // about one request in three would fail). A target registered by hand would not do: Portico owns the target
    // group and takes off what no endpoint asks for.
    const [group] = (await aws.elbv2.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
    const podTargets = pods.items.map((p) => ({ ip: p.status!.podIP!, port: 8080 }));
    await waitFor(
      "the pods' targets to pass their checks",
      () => podTargets.every((t) => edge.stateOf(group!.TargetGroupArn!, t) === "healthy"),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // The namespace opts out of readiness gates, which would keep such a pod unready (its gate never opens): here
    // it is one Kubernetes calls ready.
    await ns.core.patchNamespace(
      { name: ns.name, body: { metadata: { labels: { [INJECT_LABELS[0]]: OPT_OUT_VALUE } } } },
      mergePatch,
    );
    const deaf = { ip: await ns.runDeafPod("echo", "deaf"), port: 8080 };
    await waitFor(
      "the deaf pod's target to fail its checks",
      () => {
        const state = edge.stateOf(group!.TargetGroupArn!, deaf);
        if (state === "unhealthy") return true;
        // Said on timeout: how far its registration and checks got.
        throw new Error(`the deaf pod's target is ${state ?? "not registered or not judged yet"}`);
      },
      // Portico registers it within seconds; then two failed checks 5 s apart (refused at once, or a timeout of
      // up to 10 s each); a loaded machine stretches them.
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const failed: string[] = [];
    for (let i = 0; i < 30; i++)
      if (!(await clientGet(ns.context, url)))
        failed.push(`${i} at ${new Date().toISOString()}: ${await edge.describe()}`);
    expect(failed).toEqual([]);

    await ns.core.deleteNamespacedPod({ name: "deaf", namespace: ns.name });

    // No pod: Portico deregisters the targets and the NLB has nowhere to send a connection; pods again: served.
    await ns.scale("echo", 0);
    await waitFor("connections to be refused", async () => (await clientStatus(ns.context, url)) === 0, {
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    await ns.scale("echo", 1);
    await waitFor(
      "the new pod to answer through the NLB",
      async () => (await clientGet(ns.context, url)) ?? undefined,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );
  });

  test("the controller's Serving follows the NLB's real health checks: healthy pods serve, a check port nothing answers on does not", async ({
    ns,
  }) => {
    const { healthEndpoint } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    const annotations = {
      [`${A}nlb-target-type`]: "ip",
      [`${A}healthcheck-interval`]: "5",
      [`${A}healthcheck-healthy-threshold`]: "2",
    };
    await ns.createLoadBalancer("web", "echo", { loadBalancerClass: "portico.io/aws-nlb" }, annotations);
    // The emulator alone would call these targets healthy; the edge's checks find nothing on port 9999.
    await ns.createLoadBalancer(
      "deaf",
      "echo",
      { loadBalancerClass: "portico.io/aws-nlb" },
      {
        ...annotations,
        [`${A}healthcheck-port`]: "9999",
      },
    );
    // Serving turns True with the first healthy target; the edge may pass the second a check round later.
    const up = await waitFor(
      "Service web to report both its targets healthy",
      async () => {
        const svc = await ns.core.readNamespacedService({ name: "web", namespace: ns.name });
        const serving = svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
        return serving?.message === "2 of 2 targets healthy" ? serving : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    expect(up).toMatchObject({ status: "True", reason: "TargetsHealthy" });
    const down = await ns.waitForServing("deaf", "False");
    expect(down.reason).toBe("TargetsUnhealthy");
    expect(down.message).toMatch(
      /fails its health check \(\S+:8080 unhealthy \(Target\.FailedHealthChecks\)\)/,
    );

    // porticoctl, asking ELBv2 as the controller does, shows the same states target by target.
    const out = await porticoctlStatus(ns, healthEndpoint!);
    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    for (const pod of pods.items) {
      expect(out).toContain(`${pod.status!.podIP}:8080 healthy`);
      expect(out).toContain(`${pod.status!.podIP}:8080 unhealthy`);
    }
  });

  test("the NLB's security group admits the Service's source ranges and drops every other client", async ({
    ns,
  }) => {
    const { edge } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    const client = `${ns.context.client.ipv4}/32`;
    const nlb = { loadBalancerClass: "portico.io/aws-nlb" };
    const annotations = { [`${A}nlb-target-type`]: "ip", [`${A}healthcheck-interval`]: "5" };
    await ns.createLoadBalancer("open", "echo", { ...nlb, loadBalancerSourceRanges: [client] }, annotations);
    await ns.createLoadBalancer(
      "closed",
      "echo",
      { ...nlb, loadBalancerSourceRanges: ["198.51.100.0/24"] },
      annotations,
    );
    const urlOf = async (name: string) => `http://${await nlbAddress(ns, edge!, name)}/`;
    // With the client's address in the ranges, Portico opens the NLB's group to it and the same NLB answers.
    await onlyAdmittedClientsAnswered(
      ns,
      edge!,
      { open: await urlOf("open"), closed: await urlOf("closed") },
      { spec: { loadBalancerSourceRanges: ["198.51.100.0/24", client] } },
    );
  });

  test("a UDP listener carries datagrams to the pods and their answers back", async ({ ns }) => {
    const { edge } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer(
      "dns",
      "echo",
      {
        loadBalancerClass: "portico.io/aws-nlb",
        ports: [{ name: "dns", port: 53, targetPort: 8080, protocol: "UDP" }],
      },
      { [`${A}nlb-target-type`]: "ip", [`${A}healthcheck-interval`]: "5" },
    );
    const address = await nlbAddress(ns, edge!, "dns");
    const [pod] = (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" })).items;
    const answer = await waitFor(
      "a datagram answered through the NLB",
      () => clientDatagram(ns.context, address, 53),
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
    expect(answer.pod).toBe(pod!.metadata!.name);
  });
});
