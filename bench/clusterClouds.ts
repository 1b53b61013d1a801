// `make bench-cluster-clouds` (`make bench-cluster` runs it too): Portico from the eks and aks overlays on the
// local cluster, each cloud's load balancers carried by the emulated edge (test/harness/cloudEdge/). Per cloud and
// target kind, with the health checks Portico configures by default: how long from the Service's creation to the
// first request a client gets answered through the load balancer, and what a client sending 20 requests a second
// sees while the 3-replica Deployment behind it rolls (every pod replaced), and while a node hosting one of the
// pods is drained (`kubectl drain`: the node leaves instance target groups and backend pools, its pod is evicted;
// BENCH_DRAINS, default 1), and while Portico's controller rolls (its two replicas replaced, leadership handed
// over; BENCH_CONTROLLER_ROLLOUTS, default 1). The rollout is the baseline that readiness gates and
// make-before-break target changes must bring to zero. Pod targets are measured in the three states a namespace
// can be in for Portico's readiness gates (each new pod Ready only once the NLB finds it healthy, or once every
// rule of an Azure IP-based pool reports it Up): nlb-ip and azure-pods without any label (gates by default, the
// webhook never holding a pod back), nlb-ip-gates and azure-pods-gates labelled `enabled` (gates guaranteed),
// nlb-ip-opted-out and azure-pods-opted-out labelled `disabled` (no gates: what a rollout loses without them).
// nlb-instance-local and azure-nodes-local are the node targets behind `externalTrafficPolicy: Local` (a node
// healthy only while it has a ready endpoint). The NLB's registration delay is AWS's "a few minutes" taken as
// REGISTRATION_DELAY_S (the tests' edge waits 3 s), so that a rollout onto new ip targets loses what it would on
// AWS.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aksOnEmulator, AKS_CLASS } from "../test/harness/cloudEdge/aksOnEmulator.ts";
import { eksOnEmulator, nlbAddress } from "../test/harness/cloudEdge/eksOnEmulator.ts";
import { teardownList } from "../test/harness/cloudEdge/teardown.ts";
import { mergePatch } from "../test/harness/kube.ts";
import { drainNode, kubectl } from "../test/harness/localCluster/kubectl.ts";
import { rollOut } from "../test/harness/localCluster/rollout.ts";
import { describeCluster, startClusterWithPortico } from "../test/harness/localCluster/install.ts";
import { ClientLoad, clientGet, E2eNamespace, outages } from "../test/harness/localCluster/usage.ts";
import { waitFor } from "../test/harness/wait.ts";
import { report } from "./report.ts";
import { INJECT_LABELS, INJECT_VALUE, OPT_OUT_VALUE } from "../controller/readinessGates/gates.ts";

const POOL = "192.0.2.240/28";
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 3);
/** After a rollout and the load answered again, how long the client keeps sending. */
const SETTLE_MS = 15_000;
/**
 * ELBv2's registration delay: "it can take a few minutes for the registration process to complete and health
 * checks to start" (ELBv2's target group documentation); two minutes here, BENCH_REGISTRATION_DELAY_S to change.
 */
const REGISTRATION_DELAY_S = Number(process.env.BENCH_REGISTRATION_DELAY_S ?? 120);

interface Variant {
  name: string;
  spec: Record<string, unknown>;
  annotations: Record<string, string>;
  /**
   * The namespace's readiness-gate label while the variant is measured (`enabled`, `disabled`); none: the label
   * is taken off. Every pod made while it is measured (each rollout's) gets the gates it says.
   */
  gatesLabel?: string;
}

/** How long the echo pods keep serving after SIGTERM (a preStop-like drain, as AWS advises behind an NLB). */
const DRAIN_S = Number(process.env.BENCH_DRAIN_S ?? 15);
/** Which variants to measure (e.g. nlb-ip,nlb-ip-gates); default: all. */
const VARIANTS = process.env.BENCH_VARIANTS?.split(",");
/** Which clouds to measure: aws,azure (the default) or one of them. */
const CLOUDS = (process.env.BENCH_CLOUDS ?? "aws,azure").split(",");

/** Creates the Service, then sends a request every 200 ms until one is answered; seconds from creation. */
async function firstAnswer(ns: E2eNamespace, v: Variant, address: (name: string) => Promise<string>) {
  const started = Date.now();
  await ns.createLoadBalancer(v.name, "echo", v.spec, v.annotations);
  const url = `http://${await address(v.name)}/`;
  await waitFor(`an answer through ${v.name}`, () => clientGet(ns.context, url, 1), {
    timeoutMs: 300_000,
    intervalMs: 200,
  });
  return { url, seconds: +((Date.now() - started) / 1000).toFixed(1) };
}

const ROLLED = "rolling update of 3 replicas at 20 requests/s";
const DRAINED = "kubectl drain of a node hosting a pod at 20 requests/s";
/** How many drains per variant (BENCH_DRAINS). */
const DRAINS = Number(process.env.BENCH_DRAINS ?? 1);
const CONTROLLER_ROLLED = "rolling update of Portico's controller at 20 requests/s";
/** How many rolling updates of the controller per variant (BENCH_CONTROLLER_ROLLOUTS). */
const CONTROLLER_ROLLOUTS = Number(process.env.BENCH_CONTROLLER_ROLLOUTS ?? 1);

/**
 * `kubectl drain` of a node that hosts one of the pods, under a 20-requests-a-second load (its pod evicted and, the
 * pods spread one per node, pending until the node is back); what the client saw. The node is uncordoned after.
 */
async function drainUnderLoad(ns: E2eNamespace, url: string) {
  const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
  const node = pods.items.find((p) => p.spec?.nodeName)!.spec!.nodeName!;
  const load = new ClientLoad(ns.context, url, { intervalMs: 50, timeoutMs: 1000 });
  try {
    await load.waitSteady(20, 120_000);
    await drainNode(ns.context, node);
    await load.waitSteady(20, 300_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  } finally {
    await load.stop();
    await kubectl(ns.context, "uncordon", node);
    // With readiness gates the pod made again waits for the NLB's registration delay and first checks.
    await ns.waitAvailable("echo", 180_000 + REGISTRATION_DELAY_S * 1000);
  }
  return outages(load.results);
}

/**
 * Rolls a Deployment (every pod replaced) under a 20-requests-a-second load through `url`: the workload's own
 * (echo) or Portico's controller (`controller`: its name and namespace as the cloud's overlay installs it); what the
 * client saw.
 */
async function rollout(ns: E2eNamespace, url: string, controller?: [name: string, namespace: string]) {
  const load = new ClientLoad(ns.context, url, { intervalMs: 50, timeoutMs: 1000 });
  try {
    await load.waitSteady(20, 120_000);
    // With readiness gates each of the three new pods waits for the NLB's registration and checks in turn.
    if (controller) await rollOut(ns.kc, "Deployment", ...controller, 600_000);
    else await rollOut(ns.kc, "Deployment", "echo", ns.name, 1_200_000);
    // Until the load is answered again (the new pods' targets may still be in their first checks), then a while
    // longer: failures can trail the last pod's start.
    await load.waitSteady(20, 300_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  } finally {
    await load.stop();
  }
  return outages(load.results);
}

async function measure(
  ns: E2eNamespace,
  controller: [name: string, namespace: string],
  variants: Variant[],
  address: (name: string) => Promise<string>,
  previous: { date?: string; figures?: Record<string, Record<string, unknown> | undefined> },
) {
  const out: Record<string, unknown> = {};
  // A variant left out keeps its figures of the last run, said to be from then.
  for (const v of variants.filter((v) => VARIANTS && !VARIANTS.includes(v.name))) {
    const before = previous.figures?.[v.name];
    if (before)
      out[v.name] = {
        "measured in the run of": before["measured in the run of"] ?? previous.date,
        ...before,
      };
  }
  for (const v of variants.filter((v) => !VARIANTS || VARIANTS.includes(v.name))) {
    await labelForGates(ns, v.gatesLabel);
    const first = await firstAnswer(ns, v, address);
    const rolls = [];
    for (let i = 0; i < ROLLOUTS; i++) {
      const o = await rollout(ns, first.url);
      console.error(`${ns.name}/${v.name} rollout ${i + 1}: ${JSON.stringify(o)}`);
      rolls.push(o);
    }
    const controllerRolls = [];
    for (let i = 0; i < CONTROLLER_ROLLOUTS; i++) {
      const o = await rollout(ns, first.url, controller);
      console.error(`${ns.name}/${v.name} controller rollout ${i + 1}: ${JSON.stringify(o)}`);
      controllerRolls.push(o);
    }
    const drains = [];
    for (let i = 0; i < DRAINS; i++) {
      const o = await drainUnderLoad(ns, first.url);
      console.error(`${ns.name}/${v.name} drain ${i + 1}: ${JSON.stringify(o)}`);
      drains.push(o);
    }
    // With BENCH_ROLLOUTS=0 or BENCH_DRAINS=0 the figures of the last run are kept, said to be from then.
    const kept = (key: string) => {
      const variant = previous.figures?.[v.name];
      const before = variant?.[key] as Record<string, unknown> | undefined;
      const date = (variant?.["measured in the run of"] as string | undefined) ?? previous.date;
      return before ? { [key]: { "measured in the run of": date, ...before } } : {};
    };
    const rows = (list: { failed: number; total: number; longestMs: number }[], what: string) => ({
      [what]: list.length,
      "failed requests": list.map((r) => r.failed),
      "requests sent": list.map((r) => r.total),
      "longest stretch without an answer, ms": list.map((r) => r.longestMs),
    });
    out[v.name] = {
      "Service created → first answered request, s": first.seconds,
      ...(rolls.length ? { [ROLLED]: rows(rolls, "rollouts") } : kept(ROLLED)),
      ...(drains.length ? { [DRAINED]: rows(drains, "drains") } : kept(DRAINED)),
      ...(controllerRolls.length
        ? { [CONTROLLER_ROLLED]: rows(controllerRolls, "rollouts") }
        : kept(CONTROLLER_ROLLED)),
    };
    await ns.core.deleteNamespacedService({ name: v.name, namespace: ns.name });
  }
  return out;
}

async function benchClouds(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), "portico-bench-clouds-"));
  const { cluster, images } = await startClusterWithPortico({
    dir: join(dir, "cluster"),
    pool: { name: "bench", addresses: [POOL] },
  });
  const context = describeCluster(cluster, images, POOL);
  const teardown = teardownList();
  try {
    const figures: Record<string, unknown> = {
      "client load":
        "one HTTP request every 50 ms on a new connection, 1 s timeout; 3 pods spread over 3 nodes",
      "health checks":
        "Portico's defaults (no annotation), run by the edge as the target group or probe says",
      "NLB registration delay, s": REGISTRATION_DELAY_S,
      "pods serve on after SIGTERM, s": DRAIN_S,
    };
    // A cloud left out keeps its figures of the last run, said to be from then.
    const previous = JSON.parse(
      await readFile(join(import.meta.dirname, "results", "cluster-clouds.json"), "utf8").catch(() => "{}"),
    ) as Record<string, unknown>;
    for (const cloud of ["aws", "azure"])
      if (!CLOUDS.includes(cloud) && previous[cloud])
        figures[cloud] = { "measured in the run of": previous.date, ...previous[cloud] };
    if (CLOUDS.includes("aws")) {
      const aws = await E2eNamespace.create(context, "bench-aws");
      teardown.defer(() => aws.delete());
      const { edge } = await eksOnEmulator(aws, {
        dataPlane: true,
        defer: teardown.defer,
        registrationDelayMs: REGISTRATION_DELAY_S * 1000,
      });
      await aws.deployEcho("echo", 3, { spread: true, drainSeconds: DRAIN_S });
      await aws.waitAvailable("echo");
      const nlb = { loadBalancerClass: "portico.io/aws-nlb" };
      const targetType = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type";
      figures.aws = await measure(
        aws,
        ["eks-portico-controller", "portico-eks"],
        [
          { name: "nlb-ip", spec: nlb, annotations: { [targetType]: "ip" } },
          { name: "nlb-instance", spec: nlb, annotations: { [targetType]: "instance" } },
          // Local: a node is a healthy target only while it has a ready endpoint (its health check node port).
          {
            name: "nlb-instance-local",
            spec: { ...nlb, externalTrafficPolicy: "Local" },
            annotations: { [targetType]: "instance" },
          },
          { name: "nlb-ip-gates", spec: nlb, annotations: { [targetType]: "ip" }, gatesLabel: INJECT_VALUE },
          {
            name: "nlb-ip-opted-out",
            spec: nlb,
            annotations: { [targetType]: "ip" },
            gatesLabel: OPT_OUT_VALUE,
          },
        ],
        (name) => nlbAddress(aws, edge!, name),
        {
          date: measuredIn(previous, "aws"),
          figures: previous.aws as Record<string, Record<string, unknown>>,
        },
      );
    }
    if (CLOUDS.includes("azure")) {
      const azure = await E2eNamespace.create(context, "bench-azure");
      teardown.defer(() => azure.delete());
      await aksOnEmulator(azure, { dataPlane: true, defer: teardown.defer });
      await azure.deployEcho("echo", 3, { spread: true, drainSeconds: DRAIN_S });
      await azure.waitAvailable("echo");
      const lb = { loadBalancerClass: AKS_CLASS };
      const pods = { "portico.io/target-type": "ip" };
      figures.azure = await measure(
        azure,
        ["aks-portico-controller", "portico-aks"],
        [
          { name: "azure-nodes", spec: lb, annotations: {} },
          { name: "azure-nodes-local", spec: { ...lb, externalTrafficPolicy: "Local" }, annotations: {} },
          { name: "azure-pods", spec: lb, annotations: pods },
          { name: "azure-pods-gates", spec: lb, annotations: pods, gatesLabel: INJECT_VALUE },
          { name: "azure-pods-opted-out", spec: lb, annotations: pods, gatesLabel: OPT_OUT_VALUE },
        ],
        (name) => azure.waitForAddress(name, 120_000),
        {
          date: measuredIn(previous, "azure"),
          figures: previous.azure as Record<string, Record<string, unknown>>,
        },
      );
    }
    return figures;
  } finally {
    await teardown.undo();
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * When the last run's figures of a cloud were measured: that run's date, or the one it kept them from when it left
 * the cloud out.
 */
function measuredIn(previous: Record<string, unknown>, cloud: string): string | undefined {
  const kept = (previous[cloud] as Record<string, unknown> | undefined)?.["measured in the run of"];
  return (kept ?? previous.date) as string | undefined;
}

/** Sets the namespace's label for Portico's readiness gates (`value`), or takes it off. */
async function labelForGates(ns: E2eNamespace, value: string | undefined): Promise<void> {
  await ns.core.patchNamespace(
    { name: ns.name, body: { metadata: { labels: { [INJECT_LABELS[0]]: value ?? null } } } },
    mergePatch,
  );
}

await report("cluster-clouds", benchClouds);
