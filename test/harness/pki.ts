import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { EnvironmentError } from "./errors.ts";

const run = promisify(execFile);

export interface CertificateAuthority {
  cert: string;
  key: string;
}

export interface IssuedCertificate {
  cert: string;
  key: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run("openssl", args, { cwd });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") throw new EnvironmentError("openssl is not installed: apt-get install openssl");
    throw new EnvironmentError(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim().split("\n")[0]}`);
  }
}

/** A fresh certificate authority in `dir` (ca.crt / ca.key), valid for ten years. */
export async function createCertificateAuthority(
  dir: string,
  commonName: string,
): Promise<CertificateAuthority> {
  const cert = join(dir, "ca.crt");
  const key = join(dir, "ca.key");
  await openssl(
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
      .concat(["-keyout", key, "-out", cert, "-days", "3650", "-subj", `/CN=${commonName}`])
      .concat([
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
      ]),
    dir,
  );
  return { cert, key };
}

/**
 * A certificate signed by `ca`: a server certificate when `hosts` are given (each an IP address or DNS name),
 * a client certificate otherwise. `organization` becomes the Kubernetes group of a client certificate.
 */
export async function issueCertificate(
  ca: CertificateAuthority,
  dir: string,
  name: string,
  opts: { commonName: string; organization?: string; hosts?: string[] },
): Promise<IssuedCertificate> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const subject = `/CN=${opts.commonName}` + (opts.organization ? `/O=${opts.organization}` : "");
  const sans = (opts.hosts ?? []).map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`));
  const lines = [
    "basicConstraints=CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    `extendedKeyUsage=${sans.length ? "serverAuth" : "clientAuth"}`,
  ];
  if (sans.length) lines.push(`subjectAltName=${sans.join(",")}`);
  await writeFile(ext, lines.join("\n") + "\n");
  await openssl(
    [
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      csr,
      "-subj",
      subject,
    ],
    dir,
  );
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      ca.cert,
      "-CAkey",
      ca.key,
      "-CAcreateserial",
      "-out",
      cert,
      "-days",
      "3650",
    ].concat(["-extfile", ext]),
    dir,
  );
  return { cert, key };
}

/** An RSA key pair for signing service-account tokens (sa.key / sa.pub). */
export async function createServiceAccountKeys(
  dir: string,
): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const paths = { privateKey: join(dir, "sa.key"), publicKey: join(dir, "sa.pub") };
  await writeFile(paths.privateKey, privateKey, { mode: 0o600 });
  await writeFile(paths.publicKey, publicKey);
  return paths;
}
