// Readiness gates on the local cluster with the cloud's load balancer carrying packets: the webhook of the
// overlay's controller gives each pod of a Service sending to pods a gate — in a namespace without any label (eks:
// the default, where the webhook never holds a pod back) and in one labelled for the guarantee (aks) — and the
// controller opens it once the load balancer's health checks pass on the pod — the NLB's target health (eks), the
// rule's backend health (aks). A rolling update then waits for the load balancer at every step, and a client
// sending 20 requests a second through it sees none fail.
import { onTestFinished } from "vitest";
import { AdmissionregistrationV1Api, AppsV1Api, type V1Pod } from "@kubernetes/client-node";
import { gateType, INJECT_LABELS, INJECT_VALUE } from "../../controller/readinessGates/gates.ts";
import { aksOnEmulator, AKS_CLASS } from "../harness/cloudEdge/aksOnEmulator.ts";
import { eksOnEmulator, nlbAddress } from "../harness/cloudEdge/eksOnEmulator.ts";
import { mergePatch } from "../harness/kube.ts";
import { ClientLoad, describe, expect, outages, test, waitFor, type E2eNamespace } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

const condition = (pod: V1Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);

/** The Service under test: its class, its annotations, and where clients reach it once it has an address. */
interface GatedService {
  class: string;
  annotations: Record<string, string>;
  address: () => Promise<string>;
  /** The namespace labelled to opt in to the guarantee; otherwise left as made (no label: gates by default). */
  optIn?: boolean;
}

/** A 3-replica rollout behind `service` with readiness gates, under 20 requests a second: none may fail. */
async function rollsOutBehindGates(ns: E2eNamespace, service: GatedService): Promise<void> {
  // The controller has made its certificate and the webhook configuration trusts it.
  const admission = ns.kc.makeApiClient(AdmissionregistrationV1Api);
  await waitFor(
    "the webhook configuration's caBundle",
    async () => {
      const c = await admission.readMutatingWebhookConfiguration({ name: "portico-readiness-gates" });
      return c.webhooks?.every((w) => w.clientConfig.caBundle) || undefined;
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  if (service.optIn)
    await ns.core.patchNamespace(
      { name: ns.name, body: { metadata: { labels: { [INJECT_LABELS[0]]: INJECT_VALUE } } } },
      mergePatch,
    );
  else {
    const labels = (await ns.core.readNamespace({ name: ns.name })).metadata?.labels ?? {};
    for (const key of INJECT_LABELS) expect(labels[key], key).toBeUndefined();
  }
  // The Service first: pods get their gates when they are made.
  await ns.createLoadBalancer("web", "echo", { loadBalancerClass: service.class }, service.annotations);
  await ns.deployEcho("echo", 3, { drainSeconds: 15, spread: true });
  await ns.waitAvailable("echo", 240_000);
  const url = `http://${await service.address()}/`;

  const pods = async () =>
    (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" })).items;
  const first = await pods();
  for (const pod of first) {
    expect(pod.spec?.readinessGates).toEqual([{ conditionType: gateType("web") }]);
    expect(condition(pod, gateType("web"))).toMatchObject({ status: "True", reason: "TargetHealthy" });
  }

  const load = new ClientLoad(ns.context, url, { intervalMs: 50, timeoutMs: 1000 });
  await load.waitSteady(20, 120_000);
  const apps = ns.kc.makeApiClient(AppsV1Api);
  await apps.patchNamespacedDeployment(
    {
      name: "echo",
      namespace: ns.name,
      body: { spec: { template: { metadata: { annotations: { "e2e.portico.io/rev": "2" } } } } },
    },
    mergePatch,
  );
  const before = new Set(first.map((p) => p.metadata!.name!));
  await waitFor(
    "three new pods Ready and the old ones gone",
    async () => {
      const now = await pods();
      const fresh = now.filter((p) => !before.has(p.metadata!.name!));
      const ready = fresh.filter((p) => condition(p, "Ready")?.status === "True");
      return (ready.length === 3 && now.length === 3) || undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  await load.waitSteady(20, 60_000);
  const results = await load.stop();
  // Each new pod became Ready only once its gate opened, which the NLB's checks passing opened.
  for (const pod of await pods()) {
    const gate = condition(pod, gateType("web"));
    expect(gate).toMatchObject({ status: "True", reason: "TargetHealthy" });
    const containers = new Date(condition(pod, "ContainersReady")!.lastTransitionTime!).getTime();
    const ready = new Date(condition(pod, "Ready")!.lastTransitionTime!).getTime();
    expect(new Date(gate!.lastTransitionTime!).getTime()).toBeGreaterThanOrEqual(containers);
    expect(ready).toBeGreaterThanOrEqual(containers);
  }
  const o = outages(results);
  console.log(
    `${service.class}: rolling update with readiness gates (${service.optIn ? "namespace labelled" : "no label"}): ${o.failed} of ${o.total} requests failed, longest gap ${o.longestMs} ms`,
  );
  expect(o.total).toBeGreaterThan(200);
  expect(o.failed).toBe(0);
}

describe("readiness gates with NLB ip targets", () => {
  test("in a namespace without the label, a rolling update waits for the NLB at every pod and loses no request", async ({
    ns,
  }) => {
    const { edge } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await rollsOutBehindGates(ns, {
      class: "portico.io/aws-nlb",
      annotations: {
        [`${A}nlb-target-type`]: "ip",
        [`${A}healthcheck-interval`]: "5",
        [`${A}healthcheck-healthy-threshold`]: "2",
      },
      address: () => nlbAddress(ns, edge!, "web"),
    });
  });
});

describe("readiness gates with Azure IP-based pools", () => {
  test("in a namespace labelled for them, a rolling update waits for the rule's probe at every pod and loses no request", async ({
    ns,
  }) => {
    await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await rollsOutBehindGates(ns, {
      class: AKS_CLASS,
      annotations: { "portico.io/target-type": "ip" },
      address: () => ns.waitForAddress("web", 120_000),
      optIn: true,
    });
  });
});
