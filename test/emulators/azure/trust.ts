// Making a Node process trust the emulator's CA after it has started. NODE_EXTRA_CA_CERTS is read once, at process
// start, so a test that starts the emulator in its own process cannot use it. tls.setDefaultCACertificates()
// (Node 22.19+/24.5+) replaces the default CA list for every TLS connection made afterwards without an explicit
// `ca` — which covers the Azure SDK's pipeline (its https.Agent passes none), MSAL's token requests through
// @azure/identity, and global fetch — so the real clients need no special options at all.
import { readFileSync } from "node:fs";
import { getCACertificates, setDefaultCACertificates } from "node:tls";

/** Adds the PEM certificate(s) in `caCertPath` to this process's default trust store (idempotent). */
export function trustCertificateAuthority(caCertPath: string): void {
  const pem = readFileSync(caCertPath, "utf8").trim();
  const current = getCACertificates("default");
  if (current.some((c) => c.trim() === pem)) return;
  setDefaultCACertificates([...current, pem]);
}
