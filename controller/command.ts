// portico-controller's command (main.ts starts it): flags, the controller, its metrics, and leadership released
// on SIGTERM. Flags are described by --help.
import { KubeConfig } from "@kubernetes/client-node";
import { startController, validateConfig } from "./app.ts";
import { parseConfig, UsageError } from "./config.ts";
import { shareConnections } from "./connections.ts";
import { createLogger } from "./log.ts";
import { serveMetrics } from "./metrics.ts";

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
  const server = await serveMetrics(config.metricsAddress, controller.metrics, {
    healthy: () => true,
    ready: () => controller.synced(),
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
