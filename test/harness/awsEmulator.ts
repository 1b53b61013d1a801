import { join } from "node:path";
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

export async function startMoto(
  motoServer: string,
  logDir: string,
  index: number,
): Promise<{ endpoint: AwsEndpoint; process: ManagedProcess }> {
  const port = await freePort();
  const process = ManagedProcess.start(
    `moto #${index}`,
    motoServer,
    ["-H", "127.0.0.1", "-p", String(port)],
    join(logDir, `moto-${index}.log`),
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
