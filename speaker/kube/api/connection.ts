// Where the apiserver is and how the speaker proves who it is: the Pod's ServiceAccount (in a cluster) or a
// kubeconfig file. Only what a speaker is ever given is understood — a bearer token (inline or from a file, re-read
// as the kubelet rotates it), a client certificate, a CA — and anything else (exec plugins, auth providers,
// passwords, proxies, impersonation) is refused by name rather than half-applied.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { load as parseYaml } from "js-yaml";

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** The kubelet rotates projected tokens well before they expire; client-go re-reads the file each minute too. */
const TOKEN_REREAD_MS = 60_000;

export interface Connection {
  /** The apiserver's base URL, e.g. https://10.96.0.1:443 (no trailing slash). */
  readonly server: string;
  readonly tls: {
    readonly ca?: Buffer;
    readonly cert?: Buffer;
    readonly key?: Buffer;
    readonly rejectUnauthorized: boolean;
    readonly servername?: string;
  };
  /** The bearer token to send now, if any. */
  token(): string | undefined;
}

export class KubeconfigError extends Error {}

/** The speaker's default: $KUBECONFIG, else the Pod's ServiceAccount, else ~/.kube/config. */
export function defaultConnection(env: NodeJS.ProcessEnv = process.env): Connection {
  if (env.KUBECONFIG) return connectionFromFile(env.KUBECONFIG.split(":")[0]!);
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) return inClusterConnection(env);
  return connectionFromFile(join(homedir(), ".kube", "config"));
}

export function inClusterConnection(env: NodeJS.ProcessEnv = process.env): Connection {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${env.KUBERNETES_SERVICE_PORT}`,
    tls: { ca: readFileSync(join(SERVICE_ACCOUNT_DIR, "ca.crt")), rejectUnauthorized: true },
    token: tokenFile(join(SERVICE_ACCOUNT_DIR, "token")),
  };
}

export function connectionFromFile(path: string): Connection {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, "utf8"));
  } catch (err) {
    throw new KubeconfigError(`cannot read the kubeconfig ${path}: ${(err as Error).message}`);
  }
  return connectionFromKubeconfig(doc, dirname(path));
}

type Entry = Record<string, unknown>;

/** A parsed kubeconfig (YAML or JSON); relative file names are taken from `baseDir`, as kubectl does. */
export function connectionFromKubeconfig(doc: unknown, baseDir: string = process.cwd()): Connection {
  const config = (doc ?? {}) as Entry;
  const contextName = text(config["current-context"]);
  const context = named(config.contexts, contextName, "context") ?? {};
  const cluster = named(config.clusters, text(context.cluster), "cluster");
  if (!cluster)
    throw new KubeconfigError(`the kubeconfig names no cluster for context "${contextName ?? ""}"`);
  const user = named(config.users, text(context.user), "user") ?? {};
  const server = (text(cluster.server) ?? "").replace(/\/+$/, "");
  if (!server) throw new KubeconfigError("the kubeconfig's cluster has no server");
  if (cluster["proxy-url"]) throw unsupported("clusters[].cluster.proxy-url");
  for (const field of ["exec", "auth-provider", "username", "password", "as", "as-groups"]) {
    if (user[field] !== undefined && user[field] !== null) throw unsupported(`users[].user.${field}`);
  }
  const inDir = (name: string) => (isAbsolute(name) ? name : join(baseDir, name));
  const material = (dataKey: string, fileKey: string, entry: Entry): Buffer | undefined => {
    const data = text(entry[dataKey]);
    const file = text(entry[fileKey]);
    return data ? Buffer.from(data, "base64") : file ? readFileSync(inDir(file)) : undefined;
  };
  const ca = material("certificate-authority-data", "certificate-authority", cluster);
  const cert = material("client-certificate-data", "client-certificate", user);
  const key = material("client-key-data", "client-key", user);
  const servername = text(cluster["tls-server-name"]);
  const inline = text(user.token);
  const file = text(user.tokenFile);
  return {
    server,
    tls: {
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(servername ? { servername } : {}),
      rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
    },
    token: inline ? () => inline : file ? tokenFile(inDir(file)) : () => undefined,
  };
}

/** A kubeconfig's string field; anything else counts as absent. */
function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function named(list: unknown, name: string | undefined, what: string): Entry | undefined {
  const entries = Array.isArray(list) ? (list as Entry[]) : [];
  const found = name === undefined ? entries[0] : entries.find((e) => e?.name === name);
  if (name !== undefined && !found)
    throw new KubeconfigError(`the kubeconfig has no ${what} named "${name}"`);
  return found?.[what] as Entry | undefined;
}

function unsupported(field: string): KubeconfigError {
  return new KubeconfigError(
    `the kubeconfig sets ${field}, which the speaker does not support: give it a token, a token file or a client certificate`,
  );
}

/** A token read from a file, re-read at most once a minute (projected ServiceAccount tokens rotate). */
function tokenFile(path: string): () => string {
  let token = "";
  let readAt = -Infinity;
  return () => {
    const now = Date.now();
    if (now - readAt >= TOKEN_REREAD_MS) {
      token = readFileSync(path, "utf8").trim();
      readAt = now;
    }
    return token;
  };
}
