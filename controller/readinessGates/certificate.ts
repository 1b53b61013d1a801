// The admission webhook's TLS: a certificate authority of its own and a serving certificate for the webhook
// Service's names, made by Portico when no certificate is given (cert-manager's, mounted with --webhook-cert-dir,
// is used as it is). Keys come from Node's crypto; node-forge writes and signs the X.509 structures, which Node
// cannot. No I/O: where they are kept is certificateStore.ts's.
import { createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import forge from "node-forge";

export interface WebhookCertificate {
  /** PEM: the authority the apiserver is told to trust (the webhook configuration's caBundle), and its key. */
  ca: string;
  caKey: string;
  /** PEM: the serving certificate and its key. */
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;
const AUTHORITY = "portico-webhook-ca";
/** The serving certificate lasts a year and is renewed in its last 30 days; the authority lasts ten. */
const SERVING_DAYS = 365;
const CA_DAYS = 3650;
export const RENEW_BEFORE_DAYS = 30;

/** The names the apiserver dials the webhook Service by (it uses `<service>.<namespace>.svc`). */
export function serviceNames(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    `${service}.${namespace}`,
  ];
}

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return {
    pem: privateKey,
    privateKey: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey),
  };
}

const serial = () => forge.util.bytesToHex(forge.random.getBytesSync(15)).replace(/^[89a-f]/, "0");

/** A certificate for `keys`, signed by `signer`, valid from a minute ago for `days`. */
function certificate(
  keys: ReturnType<typeof keyPair>,
  subject: string,
  issuer: { name: string; key: forge.pki.rsa.PrivateKey },
  days: number,
  extensions: object[],
  now: Date,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
  cert.setSubject([{ name: "commonName", value: subject }]);
  cert.setIssuer([{ name: "commonName", value: issuer.name }]);
  cert.setExtensions(extensions);
  cert.sign(issuer.key, forge.md.sha256.create());
  return cert;
}

/**
 * A serving certificate for `names`, signed by `authority` when given (a renewal: the caBundle the apiserver trusts
 * stays, so replicas still serving the previous certificate go on being trusted), else by a new authority.
 */
export function issueWebhookCertificate(
  names: readonly string[],
  now = new Date(),
  authority?: { ca: string; caKey: string },
): WebhookCertificate {
  let ca: { pem: string; keyPem: string; key: forge.pki.rsa.PrivateKey };
  if (authority) {
    ca = { pem: authority.ca, keyPem: authority.caKey, key: forge.pki.privateKeyFromPem(authority.caKey) };
  } else {
    const caKeys = keyPair();
    const made = certificate(
      caKeys,
      AUTHORITY,
      { name: AUTHORITY, key: caKeys.privateKey },
      CA_DAYS,
      [
        { name: "basicConstraints", cA: true, critical: true },
        { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      ],
      now,
    );
    ca = { pem: forge.pki.certificateToPem(made), keyPem: caKeys.pem, key: caKeys.privateKey };
  }
  const keys = keyPair();
  const cert = certificate(
    keys,
    names[0]!,
    { name: AUTHORITY, key: ca.key },
    SERVING_DAYS,
    [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: names.map((value) => ({ type: 2, value })) },
    ],
    now,
  );
  return { ca: ca.pem, caKey: ca.keyPem, cert: forge.pki.certificateToPem(cert), key: keys.pem };
}

/** Whether a kept authority can sign a renewal: readable, its key its own, and not within a year of its end. */
export function usableAuthority(kept: Partial<WebhookCertificate>, now = new Date()): boolean {
  if (!kept.ca || !kept.caKey) return false;
  try {
    const ca = new X509Certificate(kept.ca);
    return (
      ca.ca &&
      ca.checkPrivateKey(createPrivateKey(kept.caKey)) &&
      new Date(ca.validTo).getTime() - now.getTime() > SERVING_DAYS * DAY_MS
    );
  } catch {
    return false;
  }
}

/**
 * Why a kept certificate cannot serve (undefined: it can): unreadable, not issued by its authority, missing
 * one of the names, or within RENEW_BEFORE_DAYS of its end.
 */
export function unfitCertificate(
  kept: Partial<WebhookCertificate>,
  names: readonly string[],
  now = new Date(),
): string | undefined {
  if (!kept.ca || !kept.caKey || !kept.cert || !kept.key) return "none is kept yet";
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(kept.cert);
    ca = new X509Certificate(kept.ca);
  } catch (err) {
    return `it cannot be read: ${(err as Error).message}`;
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return "it was not issued by the kept authority";
  const sans = (cert.subjectAltName ?? "").split(", ").map((s) => s.replace(/^DNS:/, ""));
  const missing = names.filter((n) => !sans.includes(n));
  if (missing.length) return `it does not name ${missing.join(", ")}`;
  const renewAt = new Date(cert.validTo).getTime() - RENEW_BEFORE_DAYS * DAY_MS;
  if (now.getTime() >= renewAt) return `it ends on ${cert.validTo}`;
  return undefined;
}
