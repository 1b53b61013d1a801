import { dirname, join } from "node:path";
import { EnvironmentError } from "./errors.ts";
import { ManagedProcess } from "./processes.ts";
import { freePort } from "./ports.ts";

/**
 * An AWS endpoint for the tests. By default a moto server started here; when AWS_ENDPOINT_URL is set
 * (LocalStack with an auth token, or a moto someone runs), that endpoint is used as it is.
 */
export interface AwsEndpoint {
  url: string;
  kind: "moto" | "localstack";
}

// moto's server with its tag lookups indexed (see the file): per-call times that do not grow with the account.
const MOTO_WRAPPER = join(import.meta.dirname, "..", "env", "moto_server.py");

/**
 * A moto server on a free port. `motoServer` is the moto_server of the virtualenv test/env/setup.sh made; the
 * wrapper runs with the python beside it. `plain` (or PORTICO_MOTO_PLAIN=1 in the environment) runs it without the
 * wrapper's patches, to compare with moto as it is.
 */
export async function startMoto(
  motoServer: string,
  logDir: string,
  index: number,
  opts: { plain?: boolean } = {},
): Promise<{ endpoint: AwsEndpoint; process: ManagedProcess }> {
  const port = await freePort();
  const process = ManagedProcess.start(
    `moto #${index}`,
    join(dirname(motoServer), "python"),
    [MOTO_WRAPPER, "-H", "127.0.0.1", "-p", String(port)],
    join(logDir, `moto-${index}.log`),
    opts.plain ? { ...globalThis.process.env, PORTICO_MOTO_PLAIN: "1" } : globalThis.process.env,
  );
  const url = `http://127.0.0.1:${port}`;
  await process.waitReady(async () => (await fetch(`${url}/moto-api/data.json`)).ok, 60_000);
  return { endpoint: { url, kind: "moto" }, process };
}

/** Works out what kind of emulator an externally given AWS_ENDPOINT_URL is. */
export async function describeExternalEndpoint(url: string): Promise<AwsEndpoint> {
  const base = url.replace(/\/+$/, "");
  try {
    if ((await fetch(`${base}/_localstack/health`)).ok) return { url: base, kind: "localstack" };
  } catch {
    throw new EnvironmentError(
      `AWS_ENDPOINT_URL=${url} does not answer: start the emulator there or unset AWS_ENDPOINT_URL to use moto`,
    );
  }
  return { url: base, kind: "moto" };
}

/** Forgets every resource the emulator holds, so that each test starts from an empty account. */
export async function resetAwsEndpoint(endpoint: AwsEndpoint): Promise<void> {
  const path = endpoint.kind === "moto" ? "/moto-api/reset" : "/_localstack/state/reset";
  const res = await fetch(`${endpoint.url}${path}`, { method: "POST" });
  if (!res.ok)
    throw new EnvironmentError(
      `resetting the AWS emulator at ${endpoint.url}${path} failed: HTTP ${res.status}`,
    );
}
