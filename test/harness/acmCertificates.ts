// A certificate as a user brings one to ACM: a self-signed certificate for one name (openssl), imported into the
// AWS emulator's ACM for its ARN. The files stay (ACM never gives the key back) until `remove`.
import { ACMClient, ImportCertificateCommand } from "@aws-sdk/client-acm";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export interface ImportedCertificate {
  arn: string;
  certificateFile: string;
  keyFile: string;
  remove(): Promise<void>;
}

export async function importCertificate(name: string): Promise<ImportedCertificate> {
  const dir = await mkdtemp(join(tmpdir(), "portico-certificate-"));
  const keyFile = join(dir, "key.pem");
  const certificateFile = join(dir, "certificate.pem");
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await promisify(execFile)("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certificateFile,
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      "-addext",
      `subjectAltName=DNS:${name}`,
    ]);
    const [certificate, key] = await Promise.all([readFile(certificateFile), readFile(keyFile)]);
    const out = await new ACMClient({}).send(
      new ImportCertificateCommand({ Certificate: certificate, PrivateKey: key }),
    );
    return { arn: out.CertificateArn!, certificateFile, keyFile, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}
