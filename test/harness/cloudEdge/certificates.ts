// A certificate for an NLB's TLS listener: made and imported into the AWS emulator's ACM as a user's would be
// (acmCertificates.ts), and handed to the edge with its key, which ACM keeps to itself, so the edge presents it
// as the NLB would.
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { importCertificate } from "../acmCertificates.ts";
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
  const imported = await importCertificate(name);
  defer(() => imported.remove());
  const pem = join(dirname(imported.certificateFile), "listener.pem");
  const [certificate, key] = await Promise.all([
    readFile(imported.certificateFile),
    readFile(imported.keyFile),
  ]);
  await writeFile(pem, Buffer.concat([certificate, key]));
  edge.certificates.set(imported.arn, pem);
  return { arn: imported.arn, certificateFile: imported.certificateFile };
}
