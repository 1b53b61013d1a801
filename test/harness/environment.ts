import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeExternalEndpoint, startMoto, type AwsEndpoint } from "./awsEmulator.ts";
import { startAzureEmulators, type AzureEndpoint } from "./azure.ts";
import { ControlPlane } from "./controlPlane.ts";
import { ensureTools, type Tools } from "./tools.ts";

/** Everything the local environment runs: one control plane and AWS endpoints for parallel workers. */
export interface Environment {
  dir: string;
  controlPlane: ControlPlane;
  /** One per worker with moto; a single shared one when AWS_ENDPOINT_URL names an external emulator. */
  awsEndpoints: AwsEndpoint[];
  /** One Azure emulator per worker (none unless asked for). */
  azureEndpoints: AzureEndpoint[];
  /** The programs it runs, built for the cluster's Kubernetes version (its kubectl among them). */
  tools: Tools;
  stop(opts?: { keepFiles?: boolean }): Promise<void>;
}

export async function startEnvironment(opts: {
  awsEndpoints: number;
  azureEmulators?: number;
  dir?: string;
}): Promise<Environment> {
  const external = process.env.AWS_ENDPOINT_URL;
  const externalEndpoint = external ? await describeExternalEndpoint(external) : undefined;
  const tools = await ensureTools(external ? "cluster" : "all");
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), "portico-env-")));
  const motoCount = external ? 0 : opts.awsEndpoints;
  // Everything starts at once; whatever did start is stopped again if anything else failed.
  const running: { stop(): Promise<void> }[] = [];
  const track = <T extends { stop(): Promise<void> }>(p: Promise<T>) => p.then((v) => (running.push(v), v));
  const stop = async ({ keepFiles = false } = {}) => {
    await Promise.all(running.map((r) => r.stop()));
    if (!keepFiles) await rm(dir, { recursive: true, force: true });
  };
  const planeStart = track(ControlPlane.start(tools, join(dir, "cluster")));
  const motoStarts = Array.from({ length: motoCount }, (_, i) =>
    track(
      startMoto(tools.motoServer!, dir, i + 1).then((m) => ({
        endpoint: m.endpoint,
        stop: () => m.process.stop(),
      })),
    ),
  );
  const azureStart = track(startAzureEmulators(opts.azureEmulators ?? 0, dir));
  const settled = await Promise.allSettled([planeStart, ...motoStarts, azureStart]);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) {
    await stop({ keepFiles: true });
    throw failed.reason;
  }
  return {
    dir,
    controlPlane: await planeStart,
    awsEndpoints: externalEndpoint
      ? [externalEndpoint]
      : (await Promise.all(motoStarts)).map((m) => m.endpoint),
    azureEndpoints: (await azureStart).endpoints,
    tools,
    stop,
  };
}
