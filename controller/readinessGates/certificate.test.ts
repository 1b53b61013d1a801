import { X509Certificate, createPrivateKey } from "node:crypto";
import { describe, expect, test } from "vitest";
import { issueWebhookCertificate, serviceNames, unfitCertificate, usableAuthority } from "./certificate.ts";

const names = serviceNames("portico-webhook", "portico-system");
const now = new Date("2026-11-29T00:00:00Z");
const issued = issueWebhookCertificate(names, now);

describe("the webhook's own certificate", () => {
  test("names the Service as the apiserver dials it, serves TLS, and is signed by the authority it comes with", () => {
    const cert = new X509Certificate(issued.cert);
    const ca = new X509Certificate(issued.ca);
    expect(cert.subjectAltName).toBe(names.map((n) => `DNS:${n}`).join(", "));
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(issued.key))).toBe(true);
    expect(ca.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(new Date(cert.validTo).getTime() - now.getTime()).toBeGreaterThan(364 * 86_400_000);
  });

  test("a kept certificate serves until 30 days before its end", () => {
    expect(unfitCertificate(issued, names, now)).toBeUndefined();
    expect(unfitCertificate(issued, names, new Date(now.getTime() + 330 * 86_400_000))).toBeUndefined();
    expect(unfitCertificate(issued, names, new Date(now.getTime() + 340 * 86_400_000))).toMatch(
      /^it ends on/,
    );
  });

  test("is made again when missing, unreadable, for other names, or not the kept authority's", () => {
    expect(unfitCertificate({}, names, now)).toBe("none is kept yet");
    expect(unfitCertificate({ ...issued, cert: "garbage" }, names, now)).toMatch(/cannot be read/);
    expect(unfitCertificate(issued, serviceNames("other", "portico-system"), now)).toMatch(
      /does not name other\.portico-system\.svc/,
    );
    const another = issueWebhookCertificate(names, now);
    expect(unfitCertificate({ ...issued, ca: another.ca }, names, now)).toBe(
      "it was not issued by the kept authority",
    );
  });
});

describe("renewal", () => {
  test("by the same authority while it has more than a year left, so the caBundle stays", () => {
    const later = new Date(now.getTime() + 340 * 86_400_000);
    expect(usableAuthority(issued, later)).toBe(true);
    const renewed = issueWebhookCertificate(names, later, issued);
    expect(renewed.ca).toBe(issued.ca);
    expect(renewed.cert).not.toBe(issued.cert);
    expect(unfitCertificate(renewed, names, later)).toBeUndefined();
    expect(new X509Certificate(renewed.cert).verify(new X509Certificate(issued.ca).publicKey)).toBe(true);
  });

  test("a new authority when the kept one is near its end, or its key is not its own", () => {
    expect(usableAuthority(issued, new Date(now.getTime() + 9.5 * 365 * 86_400_000))).toBe(false);
    const other = issueWebhookCertificate(names, now);
    expect(usableAuthority({ ca: issued.ca, caKey: other.caKey }, now)).toBe(false);
    expect(usableAuthority({ ca: issued.ca }, now)).toBe(false);
  });
});
