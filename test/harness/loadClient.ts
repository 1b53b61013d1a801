// A steady HTTP client for the end-to-end tests, run inside the LAN's client namespace: one request every
// `interval` ms, each on a new connection (so each is routed afresh, as a new user's would be), each given
// `timeout` ms. Prints one JSON line per request: when it started (ms since the epoch), how long it took,
// and which pod answered or why it failed. Runs until SIGTERM. Usage: node loadClient.ts <url> <interval> <timeout>
import { request } from "node:http";
import { readEchoAnswer } from "./echoAnswer.ts";

const [url = "", interval = "50", timeout = "1000"] = process.argv.slice(2);

function once(): void {
  const start = Date.now();
  let done = false;
  const finish = (fields: Record<string, unknown>) => {
    if (done) return;
    done = true;
    process.stdout.write(JSON.stringify({ start, ms: Date.now() - start, ...fields }) + "\n");
  };
  const req = request(url, { agent: false, timeout: Number(timeout) }, (res) => readEchoAnswer(res, finish));
  req.on("timeout", () => req.destroy(new Error("timeout")));
  req.on("error", (err) => finish({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }));
  req.end();
}

const timer = setInterval(once, Number(interval));
process.on("SIGTERM", () => {
  clearInterval(timer);
  // Requests in flight get their time to finish.
  setTimeout(() => process.exit(0), Number(timeout) + 100);
});
