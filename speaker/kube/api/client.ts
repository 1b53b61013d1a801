// The speaker's Kubernetes client: JSON over HTTPS to the apiserver, and watches as streams of JSON lines. It
// exists for the speaker's footprint. The official client loads its whole generated API (every kind's model and
// serializer, ~85 MiB resident) the moment anything of it is imported, even only its KubeConfig; a speaker runs
// on every node and needs seven verbs: get, list, watch, create, merge-patch, delete and the Events it records.
// Objects stay the apiserver's JSON (timestamps are strings), typed with the official client's interfaces only.
import http from "node:http";
import https from "node:https";
import {
  connectionFromKubeconfig,
  defaultConnection,
  connectionFromFile,
  type Connection,
} from "./connection.ts";

/** A failed call: `code` is the HTTP status (404 missing, 403 forbidden, 409 conflict, 410 expired). */
export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string | undefined;
  constructor(code: number, message: string, reason?: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface Watching {
  /** Ends the watch; `done` is then called without an error. */
  abort(): void;
}

type Query = Record<string, string | number | boolean | undefined>;

/** The longest a call (not a watch) may go without a byte from the apiserver; a list of thousands takes seconds. */
const CALL_TIMEOUT_MS = 60_000;

export class KubeApi {
  private readonly connection: Connection;
  private readonly agent: http.Agent;
  private readonly secure: boolean;

  constructor(connection: Connection) {
    this.connection = connection;
    this.secure = connection.server.startsWith("https:");
    // Few connections, kept open: the speaker's watches hold one each and its writes are queued (8 at most).
    const options = { keepAlive: true, keepAliveMsecs: 15_000, maxFreeSockets: 4 };
    this.agent = this.secure ? new https.Agent({ ...options, ...connection.tls }) : new http.Agent(options);
  }

  /** $KUBECONFIG, the Pod's ServiceAccount, or ~/.kube/config; or the kubeconfig file given. */
  static load(kubeconfig?: string): KubeApi {
    return new KubeApi(kubeconfig ? connectionFromFile(kubeconfig) : defaultConnection());
  }

  /** From a kubeconfig already parsed (e.g. another client's exported configuration). */
  static fromKubeconfig(doc: unknown): KubeApi {
    return new KubeApi(connectionFromKubeconfig(doc));
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.call<T>("GET", path, query);
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, undefined, body, "application/json");
  }

  /** A JSON merge patch (RFC 7386): fields named are set, `null` removes one, the rest is kept. */
  mergePatch<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("PATCH", path, undefined, body, "application/merge-patch+json");
  }

  delete(path: string): Promise<unknown> {
    return this.call("DELETE", path);
  }

  /**
   * Streams the events of `path` from `query.resourceVersion`. `done` is called once: without an error when the
   * apiserver ended the watch (its timeout) or it was aborted, with one when it failed — a KubeApiError for an
   * HTTP error, or when nothing arrived for `idleMs` (a connection that died without a word).
   */
  watch(
    path: string,
    query: Query,
    onEvent: (type: WatchEventType, object: Record<string, unknown>) => void,
    done: (err?: unknown) => void,
    idleMs: number,
  ): Watching {
    let finished = false;
    let aborted = false;
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      request.destroy();
      done(aborted ? undefined : err);
    };
    const idle = setTimeout(() => finish(new Error(`no word from the apiserver for ${idleMs} ms`)), idleMs);
    idle.unref();
    const request = this.send("GET", path, { ...query, watch: true });
    request.on("error", (err) => finish(err));
    request.on("response", (response) => {
      if (response.statusCode !== 200) {
        readBody(response).then(
          (text) => finish(apiError(response.statusCode ?? 0, text)),
          (err: unknown) => finish(err),
        );
        return;
      }
      let pending = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        idle.refresh();
        pending += chunk;
        let newline;
        while (!finished && (newline = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim() === "") continue;
          let event: { type: WatchEventType; object: Record<string, unknown> };
          try {
            event = JSON.parse(line) as typeof event;
          } catch (err) {
            finish(new Error(`the apiserver sent a watch event that is not JSON: ${(err as Error).message}`));
            return;
          }
          onEvent(event.type, event.object);
        }
      });
      response.on("end", () => finish());
      response.on("error", (err) => finish(err));
      response.on("close", () => finish());
    });
    request.end();
    return {
      abort: () => {
        aborted = true;
        finish();
      },
    };
  }

  private async call<T>(
    method: string,
    path: string,
    query?: Query,
    body?: unknown,
    type?: string,
  ): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = this.send(method, path, query, type, payload);
    // An apiserver that accepted the connection but never answers must not hold the caller forever.
    request.setTimeout(CALL_TIMEOUT_MS, () =>
      request.destroy(new Error(`${method} ${path}: no answer from the apiserver in ${CALL_TIMEOUT_MS} ms`)),
    );
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      request.on("response", resolve);
      request.on("error", reject);
      request.end(payload);
    });
    const text = await readBody(response);
    const status = response.statusCode ?? 0;
    if (status >= 400) throw apiError(status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private send(
    method: string,
    path: string,
    query?: Query,
    type?: string,
    payload?: string,
  ): http.ClientRequest {
    const url = new URL(this.connection.server + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const token = this.connection.token();
    const headers: http.OutgoingHttpHeaders = {
      accept: "application/json",
      "user-agent": "portico-speaker",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(type ? { "content-type": type, "content-length": Buffer.byteLength(payload ?? "") } : {}),
    };
    const send = this.secure ? https.request : http.request;
    return send(url, { method, headers, agent: this.agent });
  }
}

function readBody(response: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.on("error", reject);
  });
}

/** The apiserver's Status says what went wrong; without one, the HTTP status does. */
function apiError(code: number, text: string): KubeApiError {
  try {
    const status = JSON.parse(text) as { message?: string; reason?: string };
    return new KubeApiError(code, status.message ?? `HTTP ${code}`, status.reason);
  } catch {
    return new KubeApiError(code, `HTTP ${code} ${http.STATUS_CODES[code] ?? ""}`.trim());
  }
}

/** The path of a resource kind in a group (`""` for the core group), optionally in a namespace. */
export function resourcePath(p: {
  group: string;
  version: string;
  plural: string;
  namespace?: string | undefined;
  name?: string;
  subresource?: string;
}): string {
  const base = p.group ? `/apis/${p.group}/${p.version}` : `/api/${p.version}`;
  const ns = p.namespace ? `/namespaces/${encodeURIComponent(p.namespace)}` : "";
  const name = p.name ? `/${encodeURIComponent(p.name)}` : "";
  const sub = p.name && p.subresource ? `/${p.subresource}` : "";
  return `${base}${ns}/${p.plural}${name}${sub}`;
}
