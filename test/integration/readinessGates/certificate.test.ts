// The webhook's own certificate as the controller replicas keep it: in the Secret its installer made, written once
// however many replicas start together, its installer's labels and annotations kept, made again by the same authority when it no longer serves, and that authority set as
// the webhook configuration's caBundle.
import { AdmissionregistrationV1Api } from "@kubernetes/client-node";
import { serviceNames, type WebhookCertificate } from "../../../controller/readinessGates/certificate.ts";
import { keptCertificate, trustAuthority } from "../../../controller/readinessGates/certificateStore.ts";
import { silentLogger } from "../../../shared/log.ts";
import { expect, test } from "../../harness/index.ts";

test("replicas starting together share one certificate, and the webhook configuration trusts its authority", async ({
  cluster,
}) => {
  const log = silentLogger();
  const kept = {
    namespace: cluster.namespace,
    secret: "portico-webhook-cert",
    names: serviceNames("portico-webhook", cluster.namespace),
  };
  const configuration = `${cluster.namespace}-gates`;
  // Made empty by the installer, as the manifests and the chart do; its labels and annotations are the
  // installer's (Helm deletes the Secret on uninstall only while they say it is the release's).
  const owner = {
    labels: { "app.kubernetes.io/managed-by": "Helm" },
    annotations: { "meta.helm.sh/release-name": "portico" },
  };
  await cluster.core.createNamespacedSecret({
    namespace: cluster.namespace,
    body: { metadata: { name: kept.secret, ...owner }, type: "Opaque" },
  });
  const [a, b, c] = (await Promise.all([1, 2, 3].map(() => keptCertificate(cluster.core, kept, log)))) as [
    WebhookCertificate,
    WebhookCertificate,
    WebhookCertificate,
  ];
  expect(b).toEqual(a);
  expect(c).toEqual(a);
  const secret = await cluster.core.readNamespacedSecret({ name: kept.secret, namespace: kept.namespace });
  expect(Buffer.from(secret.data!["tls.crt"]!, "base64").toString()).toBe(a.cert);
  expect(secret.metadata).toMatchObject(owner);

  // One that no longer names the Service (it moved) is made again, in the same Secret.
  const moved = await keptCertificate(
    cluster.core,
    { ...kept, names: serviceNames("gates", cluster.namespace) },
    log,
  );
  expect(moved.cert).not.toBe(a.cert);
  // By the same authority: the caBundle, and the trust in replicas still serving the old one, stay.
  expect(moved.ca).toBe(a.ca);
  expect(
    await keptCertificate(cluster.core, { ...kept, names: serviceNames("gates", cluster.namespace) }, log),
  ).toEqual(moved);

  const admission = cluster.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const webhook = (name: string) => ({
    name,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    failurePolicy: "Ignore",
    clientConfig: { url: "https://localhost:1/mutate-v1-pod" },
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": cluster.namespace, never: "true" } },
  });
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: configuration },
      webhooks: [webhook("a.portico.io"), webhook("b.portico.io")],
    },
  });
  cluster.defer(() =>
    admission.deleteMutatingWebhookConfiguration({ name: configuration }).then(() => undefined),
  );
  await trustAuthority(admission, configuration, moved.ca, log);
  const configured = await admission.readMutatingWebhookConfiguration({ name: configuration });
  const bundle = Buffer.from(moved.ca).toString("base64");
  expect(configured.webhooks!.map((w) => [w.name, w.clientConfig.caBundle, w.failurePolicy])).toEqual([
    ["a.portico.io", bundle, "Ignore"],
    ["b.portico.io", bundle, "Ignore"],
  ]);
  // Already trusted: nothing is written.
  await trustAuthority(admission, configuration, moved.ca, log);
  const again = await admission.readMutatingWebhookConfiguration({ name: configuration });
  expect(again.metadata!.resourceVersion).toBe(configured.metadata!.resourceVersion);
});
