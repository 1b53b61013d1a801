// The readiness-gate webhook behind the real apiserver, configured with the manifests' own entries (their
// namespace selectors, paths, failure policies and timeouts; only narrowed to the test's namespace and pointed at
// the test's address): pods of every namespace are given a gate for each LoadBalancer Service of Portico's that
// selects them and sends to pods, and nothing else is touched; a namespace labelled `disabled` gets none. With no
// controller answering, the pods of a namespace labelled `enabled` are refused (Fail), while those of a namespace
// without the label are made without their gates: the webhook never holds them back.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AdmissionregistrationV1Api,
  loadAllYaml,
  type V1MutatingWebhookConfiguration,
  type V1Pod,
} from "@kubernetes/client-node";
import {
  GATED_POD_LABEL,
  gateType,
  INJECT_LABELS,
  INJECT_VALUE,
  OPT_OUT_VALUE,
} from "../../../controller/readinessGates/gates.ts";
import { issueWebhookCertificate } from "../../../controller/readinessGates/certificate.ts";
import { AWS_CLASS, startPortico } from "../../harness/controller.ts";
import { expect, mergePatch, test, type TestCluster } from "../../harness/index.ts";
import { MANIFESTS } from "../../harness/manifests.ts";

const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };
const [PORTICO_LABEL, LBC_LABEL] = INJECT_LABELS;

/** The manifests' webhook configuration (manifests/base/controller-webhook.yaml), as installed. */
function manifestsConfiguration(): V1MutatingWebhookConfiguration {
  const objects = loadAllYaml(
    readFileSync(join(MANIFESTS, "base", "controller-webhook.yaml"), "utf8"),
  ) as V1MutatingWebhookConfiguration[];
  return objects.find((o) => o.kind === "MutatingWebhookConfiguration")!;
}

/**
 * The manifests' webhook configuration, each entry sent to `port` on this machine at its own path and asked
 * about this test's namespace alone (other tests share the apiserver), or the `namespaces` given. `failurePolicy`:
 * every entry's instead of the manifests', so that a pod made proves the webhook answered.
 */
async function configureWebhook(
  cluster: TestCluster,
  port: number,
  ca: string,
  opts: { namespaces?: string[]; failurePolicy?: "Fail" } = {},
) {
  const admission = cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const installed = manifestsConfiguration();
  const name = `${cluster.namespace}-readiness-gates`;
  const webhooks = installed.webhooks!.map(({ clientConfig, namespaceSelector, ...webhook }) => ({
    ...webhook,
    ...(opts.failurePolicy ? { failurePolicy: opts.failurePolicy } : {}),
    clientConfig: {
      url: `https://localhost:${port}${clientConfig.service!.path}`,
      caBundle: Buffer.from(ca).toString("base64"),
    },
    namespaceSelector: {
      ...namespaceSelector,
      matchExpressions: [
        ...(namespaceSelector?.matchExpressions ?? []),
        {
          key: "kubernetes.io/metadata.name",
          operator: "In",
          values: opts.namespaces ?? [cluster.namespace],
        },
      ],
    },
  }));
  await admission.createMutatingWebhookConfiguration({ body: { metadata: { name }, webhooks } });
  cluster.defer(() => admission.deleteMutatingWebhookConfiguration({ name }).then(() => undefined));
}

async function label(cluster: TestCluster, labels: Record<string, string | null>) {
  await cluster.core.patchNamespace({ name: cluster.namespace, body: { metadata: { labels } } }, mergePatch);
}

const podBody = (name: string, app: string): V1Pod => ({
  metadata: { name, labels: { app } },
  spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
});

async function createPod(cluster: TestCluster, name: string, app: string) {
  return cluster.core.createNamespacedPod({ namespace: cluster.namespace, body: podBody(name, app) });
}

/** The pod's creation refused: the apiserver's status message. */
async function refusal(cluster: TestCluster, name: string, app: string) {
  const refused = await createPod(cluster, name, app).then(
    () => undefined,
    (err: { code?: number; body?: string }) => err,
  );
  expect(refused?.code, `${name} refused`).toBe(500);
  return (JSON.parse(String(refused?.body)) as { message: string }).message;
}

async function withWebhook(cluster: TestCluster, configure: Parameters<typeof configureWebhook>[3] = {}) {
  const dir = await mkdtemp(join(tmpdir(), "portico-webhook-"));
  cluster.defer(() => rm(dir, { recursive: true, force: true }));
  const cert = issueWebhookCertificate(["localhost"]);
  await writeFile(join(dir, "tls.crt"), cert.cert);
  await writeFile(join(dir, "tls.key"), cert.key);
  const controller = await startPortico(cluster, {
    webhook: {
      address: "127.0.0.1:0",
      certDir: dir,
      namespace: cluster.namespace,
    },
  });
  const server = await controller.webhook!.serving;
  await configureWebhook(cluster, server.port, cert.ca, configure);
  return controller;
}

async function ipService(cluster: TestCluster, namespace = cluster.namespace) {
  await cluster.core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: "web", annotations: IP },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: AWS_CLASS,
        selector: { app: "web" },
        ports: [{ port: 80 }],
      },
    },
  });
}

test("pods of a namespace without the label get a gate for each Service of Portico's that selects them with pod targets; labelled disabled, none", async ({
  cluster,
}) => {
  await withWebhook(cluster);
  await ipService(cluster);
  await cluster.createService("web-nodes", {
    type: "LoadBalancer",
    loadBalancerClass: AWS_CLASS,
    selector: { app: "web" },
    ports: [{ port: 81 }],
  });
  await cluster.createService(
    "web-elsewhere",
    {
      type: "LoadBalancer",
      loadBalancerClass: "example.com/other",
      selector: { app: "web" },
      ports: [{ port: 82 }],
    },
    IP,
  );
  await cluster.createService("web-inside", {
    type: "ClusterIP",
    selector: { app: "web" },
    ports: [{ port: 83 }],
  });

  const gated = await createPod(cluster, "gated", "web");
  expect(gated.spec?.readinessGates).toEqual([{ conditionType: gateType("web") }]);
  expect(gated.metadata?.labels).toEqual({ app: "web", [GATED_POD_LABEL]: "true" });
  const other = await createPod(cluster, "other", "db");
  expect(other.spec?.readinessGates).toBeUndefined();
  expect(other.metadata?.labels).toEqual({ app: "db" });

  // Opted out, with either key: the webhook is not asked.
  for (const key of [PORTICO_LABEL, LBC_LABEL]) {
    await label(cluster, { [key]: OPT_OUT_VALUE });
    const plain = await createPod(cluster, `opted-out-${key.split("/")[0]}`, "web");
    expect(plain.spec?.readinessGates, key).toBeUndefined();
    expect(plain.metadata?.labels, key).toEqual({ app: "web" });
    await label(cluster, { [key]: null });
  }
});

test("with no controller answering, a namespace labelled enabled has its pods refused, one without the label has them made without gates", async ({
  cluster,
}) => {
  const controller = await withWebhook(cluster);
  await ipService(cluster);
  for (const key of [PORTICO_LABEL, LBC_LABEL]) {
    await label(cluster, { [key]: INJECT_VALUE });
    const gated = await createPod(cluster, `gated-${key.split("/")[0]}`, "web");
    expect(gated.spec?.readinessGates, key).toEqual([{ conditionType: gateType("web") }]);
    await label(cluster, { [key]: null });
  }

  await controller.stop();
  // Without the label: made as without Portico, at once.
  const plain = await createPod(cluster, "while-down", "web");
  expect(plain.spec?.readinessGates).toBeUndefined();
  expect(plain.metadata?.labels).toEqual({ app: "web" });
  // Opted in, with either key: refused (their owner tries again), not made without their gates.
  await label(cluster, { [PORTICO_LABEL]: INJECT_VALUE });
  expect(await refusal(cluster, "refused-portico", "web")).toMatch(
    /failed calling webhook "pods\.readiness-gates\.portico\.io".*connection refused/,
  );
  await label(cluster, { [PORTICO_LABEL]: null, [LBC_LABEL]: INJECT_VALUE });
  expect(await refusal(cluster, "refused-lbc", "web")).toMatch(
    /failed calling webhook "pods\.lbc-readiness-gates\.portico\.io".*connection refused/,
  );
  // Where both keys are set, Portico's decides.
  await label(cluster, { [PORTICO_LABEL]: OPT_OUT_VALUE });
  const optedOut = await createPod(cluster, "opted-out", "web");
  expect(optedOut.spec?.readinessGates).toBeUndefined();
});

test("a webhook that takes the connection and never answers holds an unlabelled namespace's pod no longer than its short timeout", async ({
  cluster,
}) => {
  // A replica that is up but stuck: it accepts connections and never says a word.
  const sockets = new Set<Socket>();
  const stuck = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => stuck.listen(0, "127.0.0.1", resolve));
  cluster.defer(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        stuck.close(() => resolve());
      }),
  );
  const port = (stuck.address() as { port: number }).port;
  await configureWebhook(cluster, port, issueWebhookCertificate(["localhost"]).ca);
  await ipService(cluster);

  const started = Date.now();
  const pod = await createPod(cluster, "made", "web");
  const tookMs = Date.now() - started;
  expect(pod.spec?.readinessGates).toBeUndefined();
  // The apiserver did call it, and gave up after the entry's timeout rather than its own.
  expect(sockets.size).toBeGreaterThan(0);
  const timeout = manifestsConfiguration().webhooks!.find(
    (w) => w.failurePolicy === "Ignore",
  )!.timeoutSeconds!;
  expect(timeout).toBeLessThanOrEqual(3);
  expect(tookMs).toBeGreaterThanOrEqual(timeout * 1000 - 100);
  expect(tookMs).toBeLessThan(8000);
});

test("a controller that serves one namespace gives no gate in another, where it would never open it", async ({
  cluster,
}) => {
  // The test's controller serves the test's namespace alone (startPortico's --namespace).
  const elsewhere = `${cluster.namespace}-elsewhere`;
  await cluster.core.createNamespace({ body: { metadata: { name: elsewhere } } });
  // No controller-manager runs: the ServiceAccount pods need is made as it would be.
  await cluster.core.createNamespacedServiceAccount({
    namespace: elsewhere,
    body: { metadata: { name: "default" } },
  });
  await withWebhook(cluster, { namespaces: [cluster.namespace, elsewhere], failurePolicy: "Fail" });
  for (const namespace of [cluster.namespace, elsewhere]) await ipService(cluster, namespace);
  const served = await createPod(cluster, "served", "web");
  expect(served.spec?.readinessGates).toEqual([{ conditionType: gateType("web") }]);
  // Made through the webhook (its policy here is Fail), which added nothing.
  const other = await cluster.core.createNamespacedPod({
    namespace: elsewhere,
    body: podBody("other", "web"),
  });
  expect(other.spec?.readinessGates).toBeUndefined();
  expect(other.metadata?.labels).toEqual({ app: "web" });
});
