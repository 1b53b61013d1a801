// portico-controller's command (main.ts starts it): flags, the controller, its metrics, and leadership released
// on SIGTERM. Flags are described by --help.
import { KubeConfig } from "@kubernetes/client-node";
import { startController, validateConfig } from "./app.ts";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";
import { shareConnections } from "./connections.ts";
import { createLogger } from "../shared/log.ts";
import { serveMetrics } from "../shared/metricsServer.ts";

export async function main(): Promise<void> {
  const log = createLogger();
  let config;
  try {
    config = parseConfig(process.argv.slice(2));
    validateConfig(config);
  } catch (err) {
    console.error(err instanceof UsageError ? err.message : `portico-controller: ${(err as Error).message}`);
    process.exit(2);
  }
  const kc = shareConnections(new KubeConfig());
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  const controller = await startController(config, kc, { log });
  const server = await serveMetrics(config.metricsAddress, controller.metrics.registry, {
    ready: () => controller.synced(),
    notReady: "caches not synced",
  });
  const shutdown = async (signal: string) => {
    log.info({ signal }, "shutting down: releasing leadership");
    await controller.stop();
    server.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
