// portico-speaker's command (main.ts starts it): flags, logging, metrics, the speaker, and shutdown on
// SIGTERM. Flags are described by --help.
import { pino } from "pino";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";
import { KubeApi } from "./kube/api/client.ts";
import { serveMetrics } from "../shared/metricsServer.ts";
import { SpeakerMetrics } from "./metrics.ts";
import { Speaker } from "./speaker.ts";

export async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.argv.slice(2));
  } catch (err) {
    console.error(err instanceof UsageError ? err.message : `portico-speaker: ${(err as Error).message}`);
    process.exit(2);
  }
  const log = pino({
    name: "portico-speaker",
    level: config.logLevel,
    base: { node: config.nodeName },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
  const api = KubeApi.load(config.kubeconfig);
  const metrics = new SpeakerMetrics();
  const speaker = new Speaker(config, api, log, metrics);
  const server = await serveMetrics(config.metricsAddress, metrics.registry, {
    ready: () => speaker.ready,
    notReady: "not ready",
  });
  const shutdown = async (signal: string) => {
    log.info({ signal }, "shutting down: handing addresses over");
    await speaker.stop();
    server.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
  await speaker.start();
}
