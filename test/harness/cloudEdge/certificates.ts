// A certificate for an NLB's TLS listener, as a user brings one to ACM: made here (a self-signed certificate for
// one name, by openssl), imported into the AWS emulator's ACM for its ARN, and handed to the edge with its key,
// which ACM keeps to itself, so the edge presents it as the NLB would.
import { ACMClient, ImportCertificateCommand } from "@aws-sdk/client-acm";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { NlbEdge } from "./nlbEdge.ts";
import type { Defer } from "./teardown.ts";

export interface IssuedCertificate {
  arn: string;
  /** The certificate alone, for a client to trust. */
  certificateFile: string;
}

export async function issueCertificate(
  edge: NlbEdge,
  name: string,
  defer: Defer,
): Promise<IssuedCertificate> {
  const dir = await mkdtemp(join(tmpdir(), "portico-certificate-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const key = join(dir, "key.pem");
  const certificateFile = join(dir, "certificate.pem");
  await promisify(execFile)("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-out",
    certificateFile,
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
    "-addext",
    `subjectAltName=DNS:${name}`,
  ]);
  const [certificate, privateKey] = await Promise.all([readFile(certificateFile), readFile(key)]);
  const imported = await new ACMClient({}).send(
    new ImportCertificateCommand({ Certificate: certificate, PrivateKey: privateKey }),
  );
  const pem = join(dir, "listener.pem");
  await writeFile(pem, Buffer.concat([certificate, privateKey]));
  edge.certificates.set(imported.CertificateArn!, pem);
  return { arn: imported.CertificateArn!, certificateFile };
}
