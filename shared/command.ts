// What both programs' commands do around their work: read the flags (a usage error is printed as it is, any
// other failure with the program's name, and the process exits 2), and stop cleanly on SIGTERM or SIGINT (the
// work's own stop, then the metrics server, then exit 0).
import type { Server } from "node:http";
import type { Logger } from "pino";
import { UsageError } from "./usageError.ts";

export function flagsOrExit<T>(program: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    console.error(err instanceof UsageError ? err.message : `${program}: ${(err as Error).message}`);
    process.exit(2);
  }
}

/** On SIGTERM or SIGINT: logs `what` (what stopping does), awaits `stop`, closes the server and exits. */
export function stopOnSignal(
  log: Logger,
  what: string,
  stop: () => Promise<void>,
  server: Pick<Server, "close">,
) {
  const shutdown = async (signal: string) => {
    log.info({ signal }, `shutting down: ${what}`);
    await stop();
    server.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
