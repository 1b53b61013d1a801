// Where the webhook's certificate comes from and who is told to trust it. Given a directory (cert-manager's
// Secret mounted, or the operator's own), the certificate is read from it, and read again when it changes; the
// webhook configuration's caBundle is then cert-manager's (or the operator's) to set. Otherwise Portico keeps its
// own in a Secret of its namespace, which every replica shares (the manifests make it empty; the first replica to
// find no certificate there writes one, and a replica that loses the race reads the winner's), and sets the
// configuration's caBundle to its authority.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AdmissionregistrationV1Api, CoreV1Api, V1Secret } from "@kubernetes/client-node";
import type { Logger } from "../../shared/log.ts";
import { mergePatch } from "../../shared/patch.ts";
import {
  issueWebhookCertificate,
  unfitCertificate,
  usableAuthority,
  type WebhookCertificate,
} from "./certificate.ts";

export interface KeptCertificate {
  namespace: string;
  /** The Secret Portico keeps its certificate in. */
  secret: string;
  names: readonly string[];
}

const code = (err: unknown) => (err as { code?: number }).code;
const decode = (data: Record<string, string> | undefined, key: string) =>
  data?.[key] ? Buffer.from(data[key], "base64").toString() : undefined;
const encode = (text: string) => Buffer.from(text).toString("base64");

function fromSecret(secret: V1Secret | undefined): Partial<WebhookCertificate> {
  const data = secret?.data;
  const ca = decode(data, "ca.crt");
  const caKey = decode(data, "ca.key");
  const cert = decode(data, "tls.crt");
  const key = decode(data, "tls.key");
  return {
    ...(ca ? { ca } : {}),
    ...(caKey ? { caKey } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
  };
}

/** The certificate in the Secret, made (or made again) first when it cannot serve. */
export async function keptCertificate(
  core: CoreV1Api,
  kept: KeptCertificate,
  log: Logger,
): Promise<WebhookCertificate> {
  for (let attempt = 0; ; attempt++) {
    let secret: V1Secret | undefined;
    try {
      secret = await core.readNamespacedSecret({ name: kept.secret, namespace: kept.namespace });
    } catch (err) {
      if (code(err) !== 404) throw err;
    }
    const current = fromSecret(secret);
    const why = unfitCertificate(current, kept.names);
    if (!why) return current as WebhookCertificate;
    if (attempt >= 3)
      throw new Error(`the webhook certificate in Secret ${kept.secret} keeps changing: ${why}`);
    // Renewed by the same authority while it lasts: the caBundle stays, and so does the trust in the other
    // replicas, which serve the previous certificate until their next look.
    const made = issueWebhookCertificate(
      kept.names,
      new Date(),
      usableAuthority(current) ? (current as WebhookCertificate) : undefined,
    );
    const body: V1Secret = {
      metadata: {
        name: kept.secret,
        namespace: kept.namespace,
        labels: { "app.kubernetes.io/name": "portico", "app.kubernetes.io/component": "webhook" },
        ...(secret ? { resourceVersion: secret.metadata!.resourceVersion! } : {}),
      },
      data: {
        "ca.crt": encode(made.ca),
        "ca.key": encode(made.caKey),
        "tls.crt": encode(made.cert),
        "tls.key": encode(made.key),
      },
    };
    try {
      // Its data alone, guarded by the version read: the Secret's labels and annotations are its installer's
      // (Helm owns the Secret by them, and deletes it on uninstall only while they say so).
      if (secret)
        await core.patchNamespacedSecret(
          {
            name: kept.secret,
            namespace: kept.namespace,
            body: { metadata: { resourceVersion: secret.metadata!.resourceVersion! }, data: body.data },
          },
          mergePatch,
        );
      else await core.createNamespacedSecret({ namespace: kept.namespace, body });
      log.info({ secret: kept.secret, why }, "made the webhook's certificate");
      return made;
    } catch (err) {
      // Another replica wrote it first: read theirs.
      if (code(err) !== 409) throw err;
    }
  }
}

/** Sets every webhook's caBundle in the configuration to `ca`, in one patch when any differs. */
export async function trustAuthority(
  admission: AdmissionregistrationV1Api,
  configuration: string,
  ca: string,
  log: Logger,
): Promise<void> {
  let current;
  try {
    current = await admission.readMutatingWebhookConfiguration({ name: configuration });
  } catch (err) {
    if (code(err) !== 404) throw err;
    log.warn(
      { configuration },
      "the MutatingWebhookConfiguration is not installed: no pod is given readiness gates (apply the manifests of this release)",
    );
    return;
  }
  const bundle = encode(ca);
  const webhooks = current.webhooks ?? [];
  if (webhooks.every((w) => w.clientConfig.caBundle === bundle)) return;
  // A JSON merge patch replaces the list: each webhook is written back whole with the new bundle.
  await admission.patchMutatingWebhookConfiguration(
    {
      name: configuration,
      body: {
        metadata: { resourceVersion: current.metadata!.resourceVersion },
        webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: bundle } })),
      },
    },
    mergePatch,
  );
  log.info({ configuration }, "the webhook configuration trusts the webhook's certificate authority");
}

/** A certificate mounted from a Secret (cert-manager's tls.crt and tls.key). */
export async function mountedCertificate(dir: string): Promise<{ cert: string; key: string }> {
  const [cert, key] = await Promise.all([
    readFile(join(dir, "tls.crt"), "utf8"),
    readFile(join(dir, "tls.key"), "utf8"),
  ]);
  return { cert, key };
}
