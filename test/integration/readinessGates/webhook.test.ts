// The readiness-gate webhook behind the real apiserver: pods of labelled namespaces are given a gate for each
// LoadBalancer Service of Portico's that selects them and sends to pods, and nothing else is touched; with no
// controller answering, the Fail policy keeps such pods from being made without their gates.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdmissionregistrationV1Api, type V1Pod } from "@kubernetes/client-node";
import { GATED_POD_LABEL, gateType, INJECT_LABELS } from "../../../controller/readinessGates/gates.ts";
import { issueWebhookCertificate } from "../../../controller/readinessGates/certificate.ts";
import { MUTATE_PATH } from "../../../controller/readinessGates/webhook.ts";
import { AWS_CLASS, startPortico } from "../../harness/controller.ts";
import { expect, mergePatch, test, type TestCluster } from "../../harness/index.ts";

const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };

/** A webhook configuration like the manifests', but for this test's namespace alone and at the test's address. */
async function configureWebhook(cluster: TestCluster, port: number, ca: string, label: string) {
  const admission = cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const name = `${cluster.namespace}-${label.split("/")[0]}`;
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [
        {
          name: "pods.readiness-gates.portico.io",
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: "Fail",
          timeoutSeconds: 10,
          clientConfig: {
            url: `https://localhost:${port}${MUTATE_PATH}`,
            caBundle: Buffer.from(ca).toString("base64"),
          },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          namespaceSelector: {
            matchLabels: { "kubernetes.io/metadata.name": cluster.namespace, [label]: "enabled" },
          },
        },
      ],
    },
  });
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

async function withWebhook(cluster: TestCluster) {
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
  return { controller, port: server.port, ca: cert.ca };
}

test("pods of a labelled namespace get a gate for each Service of Portico's that selects them with pod targets", async ({
  cluster,
}) => {
  const { port, ca } = await withWebhook(cluster);
  await configureWebhook(cluster, port, ca, INJECT_LABELS[0]);
  await cluster.createService(
    "web",
    { type: "LoadBalancer", loadBalancerClass: AWS_CLASS, selector: { app: "web" }, ports: [{ port: 80 }] },
    IP,
  );
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

  // Not labelled yet: the webhook is not asked.
  const before = await createPod(cluster, "before", "web");
  expect(before.spec?.readinessGates).toBeUndefined();

  await label(cluster, { [INJECT_LABELS[0]]: "enabled" });
  const gated = await createPod(cluster, "gated", "web");
  expect(gated.spec?.readinessGates).toEqual([{ conditionType: gateType("web") }]);
  expect(gated.metadata?.labels).toEqual({ app: "web", [GATED_POD_LABEL]: "true" });
  const other = await createPod(cluster, "other", "db");
  expect(other.spec?.readinessGates).toBeUndefined();
  expect(other.metadata?.labels).toEqual({ app: "db" });
});

test("the AWS Load Balancer Controller's namespace label works too; with no controller answering, such pods are refused", async ({
  cluster,
}) => {
  const { controller, port, ca } = await withWebhook(cluster);
  await configureWebhook(cluster, port, ca, INJECT_LABELS[1]);
  await cluster.createService(
    "web",
    { type: "LoadBalancer", loadBalancerClass: AWS_CLASS, selector: { app: "web" }, ports: [{ port: 80 }] },
    IP,
  );
  await label(cluster, { [INJECT_LABELS[1]]: "enabled" });
  const gated = await createPod(cluster, "gated", "web");
  expect(gated.spec?.readinessGates).toEqual([{ conditionType: gateType("web") }]);

  await controller.stop();
  const refused = await createPod(cluster, "while-down", "web").then(
    () => undefined,
    (err: { code?: number; body?: string }) => err,
  );
  expect(refused?.code).toBe(500);
  expect((JSON.parse(String(refused?.body)) as { message: string }).message).toMatch(
    /failed calling webhook "pods\.readiness-gates\.portico\.io".*connection refused/,
  );
  // Without the label the namespace's pods are made as ever.
  await label(cluster, { [INJECT_LABELS[1]]: null });
  const plain = await createPod(cluster, "plain", "web");
  expect(plain.spec?.readinessGates).toBeUndefined();
});
