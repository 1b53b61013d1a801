// The small HTTP server both programs run beside their work: Prometheus metrics (/metrics) and the kubelet's
// probes (/healthz for liveness, /readyz for readiness), on the address a flag gives.
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";
import { UsageError } from "./usageError.ts";

export interface ProbeAnswers {
  /** The process is alive and its loops are turning (liveness); always, when not given. */
  healthy?(): boolean;
  /** It can do its work (readiness). */
  ready(): boolean;
  /** What /readyz says when not ready. */
  notReady: string;
}

/**
 * A listen address as the flags take it, "host:port" or ":port" (every interface): an IPv6 host in brackets
 * ("[::1]:8080", as in a URL) is given to the listener without them.
 */
export function listenAddress(address: string): { host: string | undefined; port: number } {
  const i = address.lastIndexOf(":");
  const digits = address.slice(i + 1);
  const port = Number(digits);
  if (i < 0 || !/^\d+$/.test(digits) || port > 65535)
    throw new Error(`${address} is not a listen address: give host:port, [ipv6]:port or :port`);
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  return { host: host || undefined, port };
}

/** A flag's listen address, checked when the program starts rather than when its server would listen. */
export function checkedListenAddress(flag: string, address: string): string {
  try {
    listenAddress(address);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
  return address;
}

export function serveMetrics(address: string, registry: Registry, probes: ProbeAnswers): Promise<Server> {
  const { host, port } = listenAddress(address);
  const server = createServer((req, res) => {
    const reply = (code: number, body: string, type = "text/plain") => {
      res.writeHead(code, { "content-type": type });
      res.end(body);
    };
    const healthy = probes.healthy?.() ?? true;
    if (req.url === "/healthz") reply(healthy ? 200 : 500, healthy ? "ok" : "unhealthy");
    else if (req.url === "/readyz")
      reply(probes.ready() ? 200 : 503, probes.ready() ? "ok" : probes.notReady);
    else if (req.url === "/metrics") {
      registry.metrics().then(
        (text) => reply(200, text, registry.contentType),
        (err: unknown) => reply(500, String(err)),
      );
    } else reply(404, "not found");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
