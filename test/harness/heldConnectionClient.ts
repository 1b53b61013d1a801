// One HTTP/1.1 connection held open for the end-to-end tests, run inside a client namespace: each line read on
// standard input sends a GET on that same connection, and one JSON line answers it, with the pod that answered
// or why nothing did. Once the connection is gone (closed, reset) every request says so: nothing reconnects, so a
// test sees exactly what happened to this one flow. Usage: node heldConnectionClient.ts <address> <port>
import { connect } from "node:net";
import { createInterface } from "node:readline";

const [address = "", port = "80"] = process.argv.slice(2);
const socket = connect(Number(port), address);
let gone: string | undefined;
let buffered = "";
let waiting: ((line: string) => void) | undefined;

const answer = (fields: Record<string, unknown>) => process.stdout.write(JSON.stringify(fields) + "\n");
socket.setEncoding("utf8");
let connected = false;
const connectTimer = setTimeout(() => socket.destroy(new Error("connect timeout")), 5000);
socket.on("connect", () => {
  clearTimeout(connectTimer);
  connected = true;
  answer({ connected: true });
});
socket.on("error", (err: NodeJS.ErrnoException) => (gone ??= err.code ?? err.message));
socket.on("close", () => {
  gone ??= "closed";
  if (!connected) {
    answer({ connected: false, error: gone });
    process.exit(0);
  }
  waiting?.("");
});
socket.on("data", (chunk: string) => {
  buffered += chunk;
  // The workload answers each GET with a small JSON body of known length.
  const end = buffered.indexOf("\r\n\r\n");
  if (end < 0) return;
  const length = Number(/content-length:\s*(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
  if (buffered.length < end + 4 + length) return;
  const body = buffered.slice(end + 4, end + 4 + length);
  buffered = buffered.slice(end + 4 + length);
  waiting?.(body);
});

createInterface({ input: process.stdin }).on("line", () => {
  if (gone) return answer({ ok: false, error: gone });
  const timer = setTimeout(() => waiting?.(""), 5000);
  waiting = (body) => {
    clearTimeout(timer);
    waiting = undefined;
    try {
      answer({ ok: true, pod: (JSON.parse(body) as { pod: string }).pod });
    } catch {
      answer({ ok: false, error: gone ?? "no answer" });
    }
  };
  socket.write(`GET / HTTP/1.1\r\nHost: ${address}\r\n\r\n`);
});
