// The HTTPS front door: identity endpoints, the /_emulator admin API, and ARM itself (bearer token check, api-version
// check, fault injection, routing), answering every failure in ARM's error envelope.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { handleAdmin } from "./admin.ts";
import { Authority } from "./auth.ts";
import { parseJsonBody } from "./body.ts";
import { NETWORK_API_VERSIONS, RESOURCES_API_VERSIONS } from "./catalog.ts";
import { ArmError, missingApiVersion, subscriptionNotFound, unsupportedApiVersion } from "./errors.ts";
import type { ServicePrincipal } from "./auth.ts";
import { Faults } from "./faults.ts";
import { handleNetwork } from "./handlers.ts";
import type { ArmRequest, ArmResponse } from "./handlers.ts";
import type { Context, EmulatorConfig } from "./kinds.ts";
import { Operations } from "./operations.ts";
import { RequestLog, operationLabel } from "./requestLog.ts";
import { handleResourceGroups } from "./resources/resourceGroups.ts";
import { route } from "./routes.ts";
import { RuleHealth } from "./ruleHealth.ts";
import type { Route } from "./routes.ts";
import { Store } from "./store.ts";
import type { ArmThrottling } from "./throttling.ts";

export interface ServerOptions {
  host: string;
  port: number;
  cert: string;
  key: string;
  subscriptionId: string;
  principal: ServicePrincipal;
  config: EmulatorConfig;
  faultSeed: number;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES)
        reject(new ArmError(413, "RequestEntityTooLarge", "The request body is too large."));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The base URL of the request being served (see EmulatorServer.base). */
const requestBase = new AsyncLocalStorage<string>();

export class EmulatorServer {
  readonly store = new Store();
  readonly operations = new Operations();
  /** What a prober (the Azure edge) reports of the rules' members (ruleHealth.ts). */
  readonly ruleHealth = new RuleHealth();
  readonly faults: Faults;
  /** ARM's and NRP's request throttling (throttling.ts), when switched on through the admin API. */
  throttling: ArmThrottling | undefined;
  readonly log = new RequestLog();
  readonly authority: Authority;
  readonly subscriptionId: string;
  readonly initialConfig: EmulatorConfig;
  config: EmulatorConfig;
  private readonly options: ServerOptions;
  private server: Server | undefined;
  private url = "";

  constructor(options: ServerOptions) {
    this.options = options;
    this.subscriptionId = options.subscriptionId;
    this.initialConfig = { ...options.config, limits: { ...options.config.limits } };
    this.config = { ...options.config, limits: { ...options.config.limits } };
    this.faults = new Faults(options.faultSeed);
    this.authority = new Authority(options.principal, () => this.base());
  }

  get baseUrl(): string {
    return this.url;
  }

  /**
   * The URL the current request reached this server at: every URL the emulator hands out (operation
   * polling, token endpoints, next pages) is on the host the client used, so clients that reach it under
   * another address (pods, through a forwarder) follow URLs they can reach. Outside a request, its own URL.
   */
  private base(): string {
    return requestBase.getStore() ?? this.url;
  }

  async start(): Promise<string> {
    const server = createServer({ cert: this.options.cert, key: this.options.key }, (req, res) => {
      this.serve(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({ error: { code: "InternalServerError", message: String(err), details: [] } }),
        );
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    const host = this.options.host.includes(":") ? `[${this.options.host}]` : this.options.host;
    this.url = `https://${host}:${port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Empties the subscription, the operations, the faults and the request log, and restores the start config. */
  reset(): void {
    this.store.reset();
    this.operations.reset();
    this.ruleHealth.reset();
    this.faults.clear();
    this.throttling = undefined;
    this.log.clear();
    this.config = { ...this.initialConfig, limits: { ...this.initialConfig.limits } };
    this.authority.tokenLifetimeSeconds = 3600;
  }

  context(): Context {
    return {
      store: this.store,
      operations: this.operations,
      faults: this.faults,
      config: this.config,
      baseUrl: this.base(),
      subscriptionId: this.subscriptionId,
      ruleHealth: this.ruleHealth,
    };
  }

  private serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host;
    return requestBase.run(host ? `https://${host}` : this.url, () => this.serveRequest(req, res));
  }

  private async serveRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = new URL(req.url ?? "/", this.url);
    const method = (req.method ?? "GET").toUpperCase();
    const raw = await readBody(req).catch((err: unknown) => err as ArmError);
    let routed: Route | undefined;
    let response: ArmResponse;
    let rateLimitHeaders: Record<string, string> = {};
    if (url.pathname.startsWith("/_emulator/")) {
      response = handleAdmin(this, method, url.pathname, typeof raw === "string" ? raw : "");
      send(res, response, {});
      return;
    }
    try {
      if (raw instanceof ArmError) throw raw;
      const identity = this.authority.handle(
        method,
        url.pathname,
        url.searchParams,
        new URLSearchParams(raw),
      );
      if (identity) {
        response = identity;
      } else {
        const apiVersion = url.searchParams.get("api-version");
        this.operations.settle();
        const claims = this.authority.verify(req.headers.authorization);
        if (!apiVersion) throw missingApiVersion();
        routed = route(url.pathname, apiVersion);
        // ARM throttles an authenticated request for a subscription before anything else looks at it.
        const verdict =
          routed &&
          this.throttling?.admit({
            method,
            path: url.pathname,
            subscriptionId: routed.subscriptionId,
            principal: claims.oid || claims.appid,
            networkType: networkType(routed),
          });
        if (verdict) {
          rateLimitHeaders = verdict.headers;
          if (verdict.refusal) throw verdict.refusal;
        }
        response = this.serveArm(method, url.pathname, url.searchParams, apiVersion, routed, req, raw);
      }
    } catch (err) {
      if (!(err instanceof ArmError)) throw err;
      response = { status: err.status, body: err.body(), headers: err.headers };
    }
    const code = (response.body as { error?: { code?: string } } | undefined)?.error?.code;
    const connection = routed ? this.faults.forConnection(method, url.pathname) : undefined;
    if (connection?.kind === "slow") await new Promise((r) => setTimeout(r, connection.delayMs));
    const retryAfter = Number(response.headers?.["Retry-After"]);
    this.log.record({
      time: new Date(started).toISOString(),
      method,
      path: url.pathname,
      operation: operationLabel(method, routed, url.pathname),
      status: response.status,
      ...(code ? { code: String(code) } : {}),
      ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      ...(connection ? { fault: connection.kind } : {}),
      durationMs: Date.now() - started,
    });
    if (connection?.kind === "drop") {
      req.socket.destroy();
      return;
    }
    const correlation = header(req, "x-ms-correlation-request-id") ?? randomUUID();
    const echo: Record<string, string> = {
      "x-ms-request-id": randomUUID(),
      "x-ms-correlation-request-id": correlation,
      ...rateLimitHeaders,
    };
    const clientRequestId = header(req, "x-ms-client-request-id");
    if (clientRequestId) echo["x-ms-client-request-id"] = clientRequestId;
    send(res, response, echo);
  }

  private serveArm(
    method: string,
    path: string,
    query: URLSearchParams,
    apiVersion: string,
    routed: Route | undefined,
    req: IncomingMessage,
    raw: string,
  ): ArmResponse {
    if (!routed) throw new ArmError(404, "NotFound", `The requested path ${path} was not found.`);
    if (routed.subscriptionId.toLowerCase() !== this.subscriptionId.toLowerCase())
      throw subscriptionNotFound(routed.subscriptionId);
    const isResources =
      routed.kind === "resourceGroup" ||
      routed.kind === "resourceGroups" ||
      routed.kind === "resourceGroupOperation";
    const supported: readonly string[] = isResources ? RESOURCES_API_VERSIONS : NETWORK_API_VERSIONS;
    if (!supported.includes(apiVersion)) {
      const type = isResources ? "resourceGroups" : "type" in routed ? routed.type : "locations/operations";
      throw unsupportedApiVersion(
        apiVersion,
        type,
        "location" in routed ? routed.location : "global",
        supported,
      );
    }
    const fault = this.faults.forRequest(
      method,
      path,
      this.subscriptionId,
      (id) =>
        `${this.base()}/subscriptions/${this.subscriptionId}/providers/Microsoft.Network/locations/global/operations/${id}?api-version=${apiVersion}`,
    );
    if (fault) throw fault;
    const request: ArmRequest = {
      method,
      path,
      query,
      apiVersion,
      headers: req.headers,
      body: method === "PUT" || method === "PATCH" || method === "POST" ? parseJsonBody(raw) : undefined,
    };
    const ctx = this.context();
    return isResources ? handleResourceGroups(ctx, routed, request) : handleNetwork(ctx, routed, request);
  }
}

/** The Microsoft.Network type a request is for ("Microsoft.Network/loadBalancers"); undefined outside NRP. */
function networkType(routed: Route): string | undefined {
  if (routed.kind === "networkOperation") return "Microsoft.Network/locations/operations";
  if (routed.kind === "network" || routed.kind === "networkList") return `Microsoft.Network/${routed.type}`;
  return undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function send(res: ServerResponse, response: ArmResponse, extra: Record<string, string>): void {
  const headers: Record<string, string> = {
    "Cache-Control": "no-cache",
    ...extra,
    ...(response.headers ?? {}),
  };
  if (response.body === undefined || response.status === 204) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(response.body);
  headers["Content-Type"] = "application/json; charset=utf-8";
  res.writeHead(response.status, headers);
  res.end(text);
}
