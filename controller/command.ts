// portico-controller's command (main.ts starts it): flags, the controller, its metrics, and leadership released
// on SIGTERM. Flags are described by --help.
import { KubeConfig } from "@kubernetes/client-node";
import { startController, validateConfig } from "./app.ts";
import { parseConfig } from "./config.ts";
import { flagsOrExit, stopOnSignal } from "../shared/command.ts";
import { shareConnections } from "./runtime/connections.ts";
import { createLogger } from "../shared/log.ts";
import { serveMetrics } from "../shared/metricsServer.ts";

export async function main(): Promise<void> {
  const log = createLogger();
  const config = flagsOrExit("portico-controller", () => {
    const parsed = parseConfig(process.argv.slice(2));
    validateConfig(parsed);
    return parsed;
  });
  const kc = shareConnections(new KubeConfig());
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  const controller = await startController(config, kc, { log });
  const server = await serveMetrics(config.metricsAddress, controller.metrics.registry, {
    ready: () => controller.synced(),
    notReady: "caches not synced",
  });
  stopOnSignal(log, "releasing leadership", () => controller.stop(), server);
}
