// The test workload's answer as the LAN clients read it (loadClient.ts, longLivedClient.ts): the pod that
// answered, or why the request failed.
import type { IncomingMessage } from "node:http";

export type EchoOutcome = { ok: true; pod: string } | { ok: false; error: string };

/** Reads `res` to its end and tells `finish` which pod answered (HTTP 200 with the workload's JSON) or why not. */
export function readEchoAnswer(res: IncomingMessage, finish: (outcome: EchoOutcome) => void): void {
  let body = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => (body += chunk));
  res.on("end", () => {
    if (res.statusCode !== 200) return finish({ ok: false, error: `HTTP ${res.statusCode}` });
    try {
      finish({ ok: true, pod: (JSON.parse(body) as { pod: string }).pod });
    } catch {
      finish({ ok: false, error: "unreadable answer" });
    }
  });
  res.on("error", (err) => finish({ ok: false, error: err.message }));
}
