// A fault-injecting HTTP proxy in front of an AWS emulator: it forwards every request, except that the ones
// matching a rule get an AWS-shaped throttling or server error instead, and, at a configurable rate, any
// request may be throttled, fail with a 5xx, be answered slowly or have its connection dropped. Tests prove
// that Portico backs off, respects retry hints and converges without a request storm. With `throttle` on
// (options, or PORTICO_AWS_THROTTLE=1), AWS's own request throttling stands in front of the emulator too:
// per action and account token buckets with AWS's figures (awsThrottle.ts), answered as AWS answers.
import { createServer, type IncomingMessage, type Server } from "node:http";
import {
  AwsThrottle,
  signerOf,
  throttleAnswer,
  throttleOptionsFromEnv,
  type ThrottleOptions,
} from "./awsThrottle.ts";

export interface FaultRule {
  /** The API action, e.g. "CreateLoadBalancer" (query protocol) or "GetResources" (JSON protocol). */
  action: string;
  /** throttle: 400 Throttling; unavailable: 503; invalid: 400 ValidationError, which no retry can fix. */
  kind: "throttle" | "unavailable" | "invalid";
  /** How many matching requests fail before they are let through. */
  times: number;
}

/** Faults at random, for every request no rule matches; seeded, so a run can be repeated. */
export interface RandomFaults {
  /** The share of requests that get a fault, 0..1. */
  rate: number;
  kinds: ("throttle" | "unavailable" | "slow" | "drop")[];
  slowMs?: number;
  seed?: number;
}

export interface FaultProxy {
  url: string;
  /** Requests seen per action, failed ones included. */
  seen: Map<string, number>;
  /** Times (ms since start) of each request per action, to check the spacing of retries. */
  timeline: Map<string, number[]>;
  addRule(rule: FaultRule): void;
  /** Calls `listener` when the emulator has answered a forwarded request: when the cloud has done a thing. */
  onAnswer(listener: (action: string, body: string, status: number) => void): void;
  setRandomFaults(faults: RandomFaults | undefined): void;
  /** Faults injected so far, by kind. */
  injected: Map<string, number>;
  /** AWS's request throttling in front of the emulator (awsThrottle.ts), when switched on. */
  throttle: AwsThrottle | undefined;
  /** Switches the emulated throttling on (fresh, full buckets) or off. */
  setThrottle(opts: ThrottleOptions | undefined): AwsThrottle | undefined;
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** Emulated AWS throttling; by default from PORTICO_AWS_THROTTLE (off when unset). */
  throttle?: ThrottleOptions | false;
}

export async function startFaultProxy(target: string, opts: FaultProxyOptions = {}): Promise<FaultProxy> {
  const throttleOpts = opts.throttle === undefined ? throttleOptionsFromEnv() : opts.throttle || undefined;
  let throttle = throttleOpts ? new AwsThrottle(throttleOpts) : undefined;
  let requests = 0;
  const rules: FaultRule[] = [];
  const injected = new Map<string, number>();
  let random: RandomFaults | undefined;
  let state = 1;
  const next = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const seen = new Map<string, number>();
  const timeline = new Map<string, number[]>();
  const started = performance.now();
  const listeners: ((action: string, body: string, status: number) => void)[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const action = actionOf(req, body);
      seen.set(action, (seen.get(action) ?? 0) + 1);
      // Appended in place: a benchmark sends tens of thousands of requests through one proxy.
      const times = timeline.get(action) ?? [];
      times.push(performance.now() - started);
      timeline.set(action, times);
      let rule: Pick<FaultRule, "kind"> | undefined = rules.find((r) => r.action === action && r.times > 0);
      if (rule) (rule as FaultRule).times--;
      else if (random && next() < random.rate) {
        const kind = random.kinds[Math.floor(next() * random.kinds.length)]!;
        injected.set(kind, (injected.get(kind) ?? 0) + 1);
        if (kind === "drop") {
          req.socket.destroy();
          return;
        }
        if (kind === "slow") await new Promise((r) => setTimeout(r, random!.slowMs ?? 2000));
        else rule = { kind };
      }
      if (rule) {
        const json = String(req.headers["content-type"]).includes("json");
        const code = {
          throttle: "Throttling",
          unavailable: "ServiceUnavailable",
          invalid: "ValidationError",
        }[rule.kind];
        const status = rule.kind === "unavailable" ? 503 : 400;
        const message =
          rule.kind === "invalid" ? "1 validation error detected: injected by the test" : "Rate exceeded";
        res.writeHead(status, {
          "content-type": json ? "application/x-amz-json-1.1" : "text/xml",
          "x-amzn-requestid": "fault",
        });
        res.end(
          json
            ? JSON.stringify({
                __type: code === "Throttling" ? "ThrottlingException" : code,
                message,
              })
            : `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>fault</RequestId></ErrorResponse>`,
        );
        return;
      }
      if (throttle) {
        const { api, account } = signerOf(req.headers.authorization);
        const params = new URLSearchParams(
          String(req.headers["content-type"]).includes("json") ? "" : body.toString(),
        );
        if (!throttle.admit({ api, action, account, params })) {
          const answer = throttleAnswer(api, `throttled-${++requests}`);
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
          return;
        }
      }
      const upstream = await fetch(new URL(req.url ?? "/", target), {
        method: req.method ?? "GET",
        headers: Object.fromEntries(
          Object.entries(req.headers)
            .filter(([k]) => k !== "host" && k !== "content-length")
            .map(([k, v]) => [k, String(v)]),
        ),
        ...(body.length ? { body: new Uint8Array(body) } : {}),
      });
      res.writeHead(
        upstream.status,
        Object.fromEntries(
          [...upstream.headers].filter(
            ([k]) => !["content-encoding", "transfer-encoding", "content-length"].includes(k),
          ),
        ),
      );
      res.end(Buffer.from(await upstream.arrayBuffer()));
      for (const listener of listeners) listener(action, body.toString(), upstream.status);
    })().catch((err: unknown) => {
      res.writeHead(502);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    timeline,
    addRule: (rule) => rules.push({ ...rule }),
    onAnswer: (listener) => listeners.push(listener),
    setRandomFaults: (faults) => {
      random = faults;
      state = faults?.seed ?? 1;
    },
    injected,
    get throttle() {
      return throttle;
    },
    setThrottle: (o) => (throttle = o ? new AwsThrottle(o) : undefined),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function actionOf(req: IncomingMessage, body: Buffer): string {
  const target = req.headers["x-amz-target"];
  if (typeof target === "string") return target.split(".").pop() ?? target;
  return (
    new URLSearchParams(body.toString()).get("Action") ??
    new URL(req.url ?? "/", "http://x").searchParams.get("Action") ??
    "unknown"
  );
}
