// portico-speaker's command (main.ts starts it): flags, logging, metrics, the speaker, and shutdown on
// SIGTERM. Flags are described by --help.
import { pino } from "pino";
import { parseConfig } from "./config.ts";
import { flagsOrExit, stopOnSignal } from "../shared/command.ts";
import { KubeApi } from "./kube/api/client.ts";
import { serveMetrics } from "../shared/metricsServer.ts";
import { SpeakerMetrics } from "./metrics.ts";
import { Speaker } from "./speaker.ts";

export async function main(): Promise<void> {
  const config = flagsOrExit("portico-speaker", () => parseConfig(process.argv.slice(2)));
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
  stopOnSignal(log, "handing addresses over", () => speaker.stop(), server);
  await speaker.start();
}
