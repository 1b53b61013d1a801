// Long-lived HTTP connections for the benchmarks, run inside the LAN's client namespace: `connections` keep-alive
// connections, each sending a GET every `interval` ms on the same connection, as a browser or a service's
// connection pool does. Prints one JSON line per request: when it started, which connection slot and which TCP
// connection carried it (`conn`, a number), whether that connection had carried a request before (`reused`), and
// which pod answered or why nothing did.
//
// A connection the server ends properly (a `Connection: close` answer, or closed while idle) is replaced by a new
// one for the next request, as any HTTP client does; a request that fails on a connection that had already
// carried one (reset, no answer within `timeout`) is a connection cut under the client. The caller tells the two
// apart from the lines. Runs until SIGTERM. Usage: node longLivedClient.ts <url> <connections> <interval> <timeout>
import { Agent, request } from "node:http";
import type { Socket } from "node:net";
import { readEchoAnswer } from "./echoAnswer.ts";

const [url = "", connections = "10", interval = "500", timeout = "2000"] = process.argv.slice(2);
let nextConn = 0;
const ids = new WeakMap<Socket, number>();

function slot(index: number): () => void {
  // One socket per slot, kept open between requests.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let busy = false;
  return () => {
    if (busy) return; // the previous request is still waiting for its answer (or its timeout)
    busy = true;
    const start = Date.now();
    let conn = 0;
    let reused = false;
    const finish = (fields: Record<string, unknown>) => {
      if (!busy) return;
      busy = false;
      const line = { start, ms: Date.now() - start, slot: index, conn, reused, ...fields };
      process.stdout.write(JSON.stringify(line) + "\n");
    };
    const req = request(url, { agent, timeout: Number(timeout) }, (res) => readEchoAnswer(res, finish));
    req.on("socket", (socket: Socket) => {
      if (!ids.has(socket)) ids.set(socket, ++nextConn);
      conn = ids.get(socket)!;
      reused = req.reusedSocket;
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err) =>
      finish({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }),
    );
    req.end();
  };
}

const slots = Array.from({ length: Number(connections) }, (_, i) => slot(i));
// The slots' requests are spread over the interval rather than sent together.
const timers = slots.map((send, i) =>
  setTimeout(
    () => {
      send();
      timers[i] = setInterval(send, Number(interval));
    },
    (Number(interval) * i) / slots.length,
  ),
);
process.on("SIGTERM", () => {
  for (const t of timers) clearInterval(t);
  setTimeout(() => process.exit(0), Number(timeout) + 100);
});
