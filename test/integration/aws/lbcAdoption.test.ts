// Taking over the AWS Load Balancer Controller's NLBs in place: the Service keeps its NLB (same ARN, same DNS name),
// listener and target group, brought to what Portico would make; targets are registered before any is
// deregistered; LBC's finalizer goes last; what LBC made for another cluster or for an Ingress is never touched;
// and nothing is done while LBC still runs.
import { LBC_NLB_CLASS, FINALIZER } from "../../../providers/classes.ts";
import type { Controller } from "../../../controller/app.ts";
import { lbcFinalizerReleaser, lbcLeaseReader } from "../../../providers/aws/lbc/kubernetes.ts";
import { ADOPTED_TAG, LBC_FINALIZER } from "../../../providers/aws/lbc/adoption.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { LBC_RECHECK_MS } from "../../../providers/aws/lbc/takeOver.ts";
import { expect, mergePatch, readyCondition, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { startFaultProxy } from "../../harness/faultProxy.ts";
import { awsWorld, serviceEvents, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";
import { lbcIngressNlb, lbcLease, lbcService, lbcStack, tagsOf, targetsOf } from "./lbcAdoptionWorld.ts";

const LEASE = "aws-load-balancer-controller-leader";

/** A controller taking over from LBC as configured from its flags (the Lease read in the test's namespace). */
function takingOver(
  cluster: TestCluster,
  { recreate, lbcCluster = cluster.namespace }: { recreate: boolean; lbcCluster?: string },
): Promise<Controller> {
  return startPortico(cluster, {
    alsoServes: [LBC_NLB_CLASS],
    settings: {
      defaultScheme: "internal",
      observationTtlMs: 60_000,
      takeOverLbc: { cluster: lbcCluster, recreate, lease: { namespace: cluster.namespace, name: LEASE } },
    },
  });
}
const WRITES = /^(AddTags|RemoveTags|Register|Deregister|Modify|Set|Create|Delete)/;

test("LBC's NLB, listener and target group are taken over in place: same ARN and DNS name, targets never all gone, its finalizer removed last; another cluster's and an Ingress's untouched", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 3);
  const [gone] = await aws.createInstances(world.network.subnets[0]!.subnetId, 1);
  const [i0, i1, i2] = world.instances;
  const svc = await lbcService(cluster, "web");
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  // LBC served two of today's nodes and one that has left the cluster.
  const mine = await lbcStack(aws, world, svc, { lbcCluster: cluster.namespace, targets: [i0!, i1!, gone!] });
  const other = await lbcStack(aws, world, svc, { lbcCluster: "another-cluster", targets: [i0!] });
  const ingress = await lbcIngressNlb(aws, world, cluster.namespace, `${cluster.namespace}/web`);
  const untouched = async () => ({
    other: [await tagsOf(aws, other.loadBalancerArn), await tagsOf(aws, other.targetGroupArn)],
    otherTargets: await targetsOf(aws, other.targetGroupArn),
    ingress: [await tagsOf(aws, ingress.loadBalancerArn), await tagsOf(aws, ingress.targetGroupArn)],
  });
  const before = await untouched();

  // Every write the emulator answered, in order, with LBC's finalizer's removal among them.
  const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!);
  cluster.defer(() => proxy.close());
  const log: { action: string; body: string }[] = [];
  proxy.onAnswer((action, body, status) => {
    if (status < 300 && WRITES.test(action)) log.push({ action, body: decodeURIComponent(body) });
  });
  const release = async (s: Parameters<ReturnType<typeof lbcFinalizerReleaser>>[0]) => {
    const released = await lbcFinalizerReleaser(cluster.core, (await started).cache)(s);
    if (released) log.push({ action: "ReleaseFinalizer", body: "" });
    return released;
  };
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    endpoint: proxy.url,
    takeOverLbc: {
      cluster: cluster.namespace,
      liveController: lbcLeaseReader(cluster.coordination, { namespace: cluster.namespace, name: LEASE }),
      releaseFinalizer: release,
    },
  });
  // Released through the controller's own cache, as the controller wires it (the closure runs after this line).
  const started: Promise<Controller> = startPortico(cluster, { alsoServes: [LBC_NLB_CLASS] }, { provider });
  await started;

  expect(await waitForHostname(cluster, "web")).toBe(mine.dnsName);
  const finalizers = await waitFor("LBC's finalizer to go", async () => {
    const f = (await cluster.getService("web")).metadata?.finalizers ?? [];
    return f.includes(LBC_FINALIZER) ? undefined : f;
  });
  expect(finalizers).toContain(FINALIZER);

  // The same NLB, listener and target group, Portico's now, with today's nodes as targets.
  const inv = await inventory(aws);
  const nlb = inv.loadBalancers.find((lb) => lb.arn === mine.loadBalancerArn)!;
  expect(nlb.dnsName).toBe(mine.dnsName);
  expect(nlb.tags).toMatchObject({
    "portico.io/cluster": cluster.namespace,
    "portico.io/service": `${cluster.namespace}/web`,
    "portico.io/service-uid": svc.metadata!.uid,
    [ADOPTED_TAG]: "aws-load-balancer-controller",
  });
  expect(
    Object.keys(nlb.tags).filter((k) => k.startsWith("service.k8s.aws/") || k.startsWith("elbv2.")),
  ).toEqual([]);
  expect(nlb.listeners).toEqual([
    expect.objectContaining({ port: 80, protocol: "TCP", targetGroupArn: mine.targetGroupArn }),
  ]);
  expect(await targetsOf(aws, mine.targetGroupArn)).toEqual(
    [i0!, i1!, i2!].map((i) => `${i.instanceId}:${nodePort}`).sort(),
  );
  expect((await tagsOf(aws, mine.targetGroupArn))["portico.io/service-uid"]).toBe(svc.metadata!.uid);
  // No second NLB for the Service.
  expect(
    inv.loadBalancers.filter((lb) => lb.tags["portico.io/service-uid"] === svc.metadata!.uid),
  ).toHaveLength(1);

  // Replayed in order, the target group was never empty, and the new node came in before the old one left.
  const registered = new Set([i0!, i1!, gone!].map((i) => i.instanceId));
  const ids = (body: string) => [...body.matchAll(/Targets\.member\.\d+\.Id=([^&]+)/g)].map((m) => m[1]!);
  const moves = log.filter(
    (e) => /^(Register|Deregister)Targets$/.test(e.action) && e.body.includes(mine.targetGroupArn),
  );
  expect(moves.map((m) => m.action)).toEqual(["RegisterTargets", "DeregisterTargets"]);
  for (const move of moves) {
    for (const id of ids(move.body)) {
      if (move.action === "RegisterTargets") registered.add(id);
      else registered.delete(id);
    }
    expect(registered.size).toBeGreaterThan(0);
  }
  // The finalizer went after every write the take-over made.
  const releasedAt = log.findIndex((e) => e.action === "ReleaseFinalizer");
  expect(releasedAt).toBeGreaterThan(0);
  expect(log.slice(releasedAt + 1).filter((e) => e.action !== "ReleaseFinalizer")).toEqual([]);
  expect(log.slice(0, releasedAt).map((e) => e.action)).toEqual(
    expect.arrayContaining(["AddTags", "RemoveTags", "RegisterTargets", "DeregisterTargets"]),
  );
  // Retagged in bulk: one AddTags for the NLB, one for its target groups, one RemoveTags for all, in that order.
  expect(log.filter((e) => /^(Add|Remove)Tags$/.test(e.action)).map((e) => e.action)).toEqual([
    "AddTags",
    "AddTags",
    "RemoveTags",
  ]);

  expect(await untouched()).toEqual(before);

  // A restarted controller, knowing nothing but the tags, keeps the same NLB and target group: nothing is made
  // or deleted for the Service.
  await (await started).stop();
  const again = await takingOver(cluster, { recreate: false });
  const calls = (again.provider as AwsProvider).clients.calls;
  await waitFor("the restarted controller to look at the Service", () =>
    (calls.get("elbv2:DescribeTargetHealth") ?? 0) > 0 && again.manager.queue.length === 0 ? true : undefined,
  );
  expect([...calls.keys()].filter((op) => /:(Create|Delete)/.test(op))).toEqual([]);
  const afterRestart = await inventory(aws);
  expect(
    afterRestart.loadBalancers.filter((lb) => lb.tags["portico.io/service-uid"] === svc.metadata!.uid),
  ).toEqual([expect.objectContaining({ arn: mine.loadBalancerArn })]);
  expect(afterRestart.targetGroups.filter((tg) => tg.arn === mine.targetGroupArn)).toHaveLength(1);

  const events = await serviceEvents(cluster, "web");
  expect(events.filter((e) => e.reason === "AdoptedLoadBalancer").map((e) => e.message)).toEqual(
    expect.arrayContaining([
      expect.stringContaining(`adopt NLB ${mine.loadBalancerArn}`),
      expect.stringContaining(`removed the AWS Load Balancer Controller's finalizer ${LBC_FINALIZER}`),
    ]),
  );
});

test("while LBC's leader Lease is renewed nothing is taken over (condition and Event); once it lapses the NLB is taken over in place", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const svc = await lbcService(cluster, "web");
  const mine = await lbcStack(aws, world, svc, { lbcCluster: "lbc-cluster", targets: world.instances });
  await lbcLease(cluster, LEASE, "aws-load-balancer-controller-7d9f-abcde");
  const tagsBefore = await tagsOf(aws, mine.loadBalancerArn);
  // The controller as configured from its flags: LBC's cluster named apart, its Lease where the test put it.
  await takingOver(cluster, { recreate: false, lbcCluster: "lbc-cluster" });
  const refused = await waitFor("the refusal", async () => {
    const c = await readyCondition(cluster, "web");
    return c?.status === "False" ? c : undefined;
  });
  expect(refused.reason).toBe("LoadBalancerControllerRunning");
  expect(refused.message).toContain("aws-load-balancer-controller-7d9f-abcde");
  expect(
    (await serviceEvents(cluster, "web")).some((e) => e.reason === "LoadBalancerControllerRunning"),
  ).toBe(true);
  expect(await tagsOf(aws, mine.loadBalancerArn)).toEqual(tagsBefore);
  expect((await inventory(aws)).loadBalancers).toHaveLength(1);
  expect((await cluster.getService("web")).metadata?.finalizers).toContain(LBC_FINALIZER);

  // LBC scaled down: its Lease goes (released, or expired). Nothing changes on the Service, yet the controller
  // looks again by itself and takes over.
  await cluster.coordination.deleteNamespacedLease({ name: LEASE, namespace: cluster.namespace });
  const hostname = await waitFor(
    "the take-over once LBC stopped",
    async () => (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.hostname,
    { timeoutMs: LBC_RECHECK_MS + 20_000 },
  );
  expect(hostname).toBe(mine.dnsName);
  await waitFor("LBC's finalizer to go", async () =>
    (await cluster.getService("web")).metadata?.finalizers?.includes(LBC_FINALIZER) ? undefined : true,
  );
  expect((await tagsOf(aws, mine.loadBalancerArn))["portico.io/service-uid"]).toBe(svc.metadata!.uid);
});

test("an NLB whose scheme differs from the Service's is never changed: refused naming the annotation, LBC's finalizer kept", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1, { internetFacing: true });
  const svc = await lbcService(cluster, "web", {
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
  });
  const mine = await lbcStack(aws, world, svc, { lbcCluster: cluster.namespace, targets: world.instances });
  const tagsBefore = await tagsOf(aws, mine.loadBalancerArn);
  await takingOver(cluster, { recreate: false });
  const refused = await waitFor("the refusal", async () => {
    const c = await readyCondition(cluster, "web");
    return c?.status === "False" ? c : undefined;
  });
  expect(refused.reason).toBe("CannotAdoptInPlace");
  expect(refused.message).toContain("aws-load-balancer-scheme");
  expect(refused.message).toContain("--aws-take-over-lbc-recreate");
  expect(await tagsOf(aws, mine.loadBalancerArn)).toEqual(tagsBefore);
  expect((await inventory(aws)).loadBalancers).toHaveLength(1);
  expect((await cluster.getService("web")).metadata?.finalizers).toContain(LBC_FINALIZER);
});

test("with --aws-take-over-lbc-recreate such a Service gets a new NLB beside LBC's, which stays untouched with its finalizer, and a Warning says so", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1, { internetFacing: true });
  const svc = await lbcService(cluster, "web", {
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
  });
  const mine = await lbcStack(aws, world, svc, { lbcCluster: cluster.namespace, targets: world.instances });
  const tagsBefore = await tagsOf(aws, mine.loadBalancerArn);
  const targetsBefore = await targetsOf(aws, mine.targetGroupArn);
  await takingOver(cluster, { recreate: true });
  const hostname = await waitForHostname(cluster, "web");
  expect(hostname).not.toBe(mine.dnsName);
  const inv = await inventory(aws);
  expect(inv.loadBalancers.find((lb) => lb.dnsName === hostname)?.scheme).toBe("internet-facing");
  expect(await tagsOf(aws, mine.loadBalancerArn)).toEqual(tagsBefore);
  expect(await targetsOf(aws, mine.targetGroupArn)).toEqual(targetsBefore);
  expect((await cluster.getService("web")).metadata?.finalizers).toContain(LBC_FINALIZER);
  const warning = await waitFor("the Warning", async () =>
    (await serviceEvents(cluster, "web")).find((e) => e.reason === "RecreatingLoadBalancer"),
  );
  expect(warning.type).toBe("Warning");
  expect(warning.message).toContain(`recreate: NLB ${mine.loadBalancerArn}`);
  expect(warning.message).toContain(`delete it, its target groups and the finalizer ${LBC_FINALIZER}`);

  // The Service comes to match LBC's NLB again (internal): Portico keeps to its own NLBs — a new internal one of
  // its own replaces its internet-facing one — and LBC's stays as it is.
  await cluster.core.patchNamespacedService(
    {
      name: "web",
      namespace: cluster.namespace,
      body: {
        metadata: { annotations: { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal" } },
      },
    },
    mergePatch,
  );
  const internal = await waitFor("Portico's own internal NLB", async () => {
    const h = (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.hostname;
    return h && h !== hostname ? h : undefined;
  });
  expect(internal).not.toBe(mine.dnsName);
  expect(await tagsOf(aws, mine.loadBalancerArn)).toEqual(tagsBefore);
  expect((await cluster.getService("web")).metadata?.finalizers).toContain(LBC_FINALIZER);
});

test("an unclassed Service LBC served with ip targets (type external, target type ip) is taken over too: the new pod registered before the gone one leaves", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const svc = await lbcService(
    cluster,
    "pods",
    {
      "service.beta.kubernetes.io/aws-load-balancer-type": "external",
      "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
    },
    { unclassed: true },
  );
  expect(svc.spec?.loadBalancerClass).toBeUndefined();
  const mine = await lbcStack(aws, world, svc, {
    lbcCluster: cluster.namespace,
    targets: [],
    podTargets: ["10.0.0.10", "10.0.0.11"],
  });
  // 10.0.0.10 has gone, 10.0.0.12 has come.
  await cluster.createEndpointSlice(
    "pods",
    [{ ip: "10.0.0.11" }, { ip: "10.0.0.12" }],
    [{ name: "http", port: 8080 }],
  );
  const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!);
  cluster.defer(() => proxy.close());
  const moves: string[] = [];
  proxy.onAnswer((action, body, status) => {
    if (
      status < 300 &&
      /^(Register|Deregister)Targets$/.test(action) &&
      decodeURIComponent(body).includes(mine.targetGroupArn)
    )
      moves.push(action);
  });
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    endpoint: proxy.url,
    takeOverLbc: { cluster: cluster.namespace },
  });
  await startPortico(cluster, { alsoServes: [LBC_NLB_CLASS] }, { provider });
  expect(await waitForHostname(cluster, "pods")).toBe(mine.dnsName);
  await waitFor("the pods to be the targets", async () =>
    (await targetsOf(aws, mine.targetGroupArn)).join() === "10.0.0.11:8080,10.0.0.12:8080" ? true : undefined,
  );
  expect(moves).toEqual(["RegisterTargets", "DeregisterTargets"]);
  expect((await tagsOf(aws, mine.loadBalancerArn))["portico.io/service-uid"]).toBe(svc.metadata!.uid);
  // Taken on under Portico's class, as every unclassed Service LBC served by its type annotation.
  expect((await cluster.getService("pods")).metadata?.annotations?.["portico.io/managed-by"]).toBe(
    "portico.io/aws-nlb",
  );
});
