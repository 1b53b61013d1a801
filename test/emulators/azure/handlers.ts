// ARM's request semantics for Microsoft.Network resources, shared by every resource type: PUT and DELETE as
// long-running operations, etags and conditional requests, 409 for a write while an operation runs, PATCH for
// tags, list, child resources, and the operation status endpoints clients poll.
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { BodyObject } from "./body.ts";
import type { Json } from "./body.ts";
import { REGIONS } from "./catalog.ts";
import { checkConditions } from "./conditions.ts";
import {
  ArmError,
  anotherOperationInProgress,
  childNotFound,
  locationNotAvailable,
  locationRequired,
  methodNotAllowed,
  operationNotFound,
  resourceGroupNotFound,
  resourceNotFound,
} from "./errors.ts";
import { assertValidName, childId, normalizeLocation, resourceId } from "./ids.ts";
import type { TopLevelType } from "./ids.ts";
import type { Context, ResourceKind } from "./kinds.ts";
import type { LoadBalancer, NetworkResource } from "./model.ts";
import type { Operation } from "./operations.ts";
import { asyncOperationUrl, operationStatusBody, resultUrl } from "./operations.ts";
import { loadBalancers } from "./resources/loadBalancers.ts";
import { networkSecurityGroups } from "./resources/networkSecurityGroups.ts";
import { publicIpAddresses, reconcilePublicAddresses } from "./resources/publicIpAddresses.ts";
import { publicIpPrefixes } from "./resources/publicIpPrefixes.ts";
import { virtualNetworks } from "./resources/virtualNetworks.ts";
import { newEtag } from "./store.ts";
import type { Route } from "./routes.ts";

export interface ArmRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  apiVersion: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface ArmResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type AnyKind = ResourceKind<NetworkResource>;
const KINDS = {
  loadBalancers,
  publicIPAddresses: publicIpAddresses,
  publicIPPrefixes: publicIpPrefixes,
  virtualNetworks,
  networkSecurityGroups,
} as unknown as Record<TopLevelType, AnyKind>;

type NetworkRoute = Extract<Route, { kind: "network" }>;

function requireResourceGroup(ctx: Context, subscriptionId: string, name: string, forWrite = false): void {
  const rg = ctx.store.resourceGroup(subscriptionId, name);
  if (!rg) throw resourceGroupNotFound(name);
  if (forWrite && rg.provisioningState === "Deleting")
    throw new ArmError(
      409,
      "ResourceGroupBeingDeleted",
      `The resource group '${rg.name}' is in deprovisioning state and cannot perform this operation.`,
    );
}

function assertNotBusy(ctx: Context, r: NetworkResource | undefined): void {
  if (!r || !ctx.config.conflictOnConcurrentWrite || !ctx.operations.isInProgress(r.operationId)) return;
  throw anotherOperationInProgress(asyncOperationUrl(ctx.baseUrl, ctx.operations.get(r.operationId!)!));
}

function lroHeaders(ctx: Context, op: Operation, withLocation: boolean): Record<string, string> {
  const headers: Record<string, string> = { "Azure-AsyncOperation": asyncOperationUrl(ctx.baseUrl, op) };
  if (withLocation) headers.Location = resultUrl(ctx.baseUrl, op);
  if (ctx.config.retryAfterSeconds > 0) headers["Retry-After"] = String(ctx.config.retryAfterSeconds);
  return headers;
}

/**
 * Accepts a write: new etag, provisioningState Updating (or Deleting), and an operation that completes later. A
 * write that supersedes a running operation (when 409s are off) cancels it, as NRP does.
 */
function startOperation(
  ctx: Context,
  req: ArmRequest,
  kind: AnyKind,
  r: NetworkResource,
  verb: "Put" | "Delete",
): Operation {
  const previous = r.operationId ? ctx.operations.get(r.operationId) : undefined;
  const name = `${verb}${kind.operationNoun}Operation`;
  const op = ctx.operations.start({
    subscriptionId: ctx.subscriptionId,
    resourceId: r.id,
    provider: "Microsoft.Network",
    location: r.location,
    apiVersion: req.apiVersion,
    kind: verb === "Put" ? "put" : "delete",
    name,
    durationMs: ctx.config.operationDurationMs,
    failWith: ctx.faults.forOperation(req.method, req.path),
    onSuccess: () => {
      const current = ctx.store.get(r.id);
      if (!current || current.operationId !== op.id) return;
      delete current.operationId;
      if (verb === "Delete") {
        ctx.store.delete(r.id);
        kind.onDeleted?.(current, ctx);
      } else {
        current.provisioningState = "Succeeded";
        kind.onProvisioned?.(current, ctx);
      }
      reconcilePublicAddresses(ctx);
    },
    onFailure: () => {
      const current = ctx.store.get(r.id);
      if (!current || current.operationId !== op.id) return;
      delete current.operationId;
      current.provisioningState = "Failed";
    },
  });
  if (previous?.status === "InProgress") {
    previous.status = "Canceled";
    previous.error = {
      code: "CanceledAndSupersededDueToAnotherOperation",
      message: `Operation ${previous.name} (${previous.id}) was canceled and superseded by operation ${name} (${op.id}).`,
    };
  }
  r.operationId = op.id;
  r.lastOperationName = name;
  r.provisioningState = verb === "Put" ? "Updating" : "Deleting";
  if (verb === "Put") r.etag = newEtag();
  return op;
}

function putResource(ctx: Context, route: NetworkRoute, req: ArmRequest): ArmResponse {
  const kind = KINDS[route.type];
  requireResourceGroup(ctx, route.subscriptionId, route.resourceGroup, true);
  assertValidName(route.name);
  const id = resourceId(route.subscriptionId, route.resourceGroup, route.type, route.name);
  const existing = ctx.store.get(id);
  checkConditions(req.headers, existing?.etag, id);
  assertNotBusy(ctx, existing);
  const root = BodyObject.root(req.body);
  const given = root.string("location");
  if (!given) throw locationRequired();
  const location = normalizeLocation(given);
  if (!(REGIONS as readonly string[]).includes(location))
    throw locationNotAvailable(given, `Microsoft.Network/${route.type}`, REGIONS);
  if (existing && existing.location !== location)
    throw new ArmError(
      400,
      "InvalidResourceLocation",
      `The resource '${route.name}' already exists in location '${existing.location}' in resource group ` +
        `'${route.resourceGroup}'. A resource with the same name cannot be created in location '${location}'. ` +
        "Please select a new resource name.",
    );
  const parsed = kind.parse(root, id, ctx);
  const candidate = {
    ...(existing ?? {
      resourceGuid: randomUUID(),
      etag: "",
      provisioningState: "Updating",
      lastOperationName: "",
    }),
    id: existing?.id ?? id,
    type: route.type,
    name: existing?.name ?? route.name,
    subscriptionId: route.subscriptionId,
    resourceGroup: existing?.resourceGroup ?? route.resourceGroup,
    location,
    tags: root.tags(),
    properties: parsed.properties,
  } as NetworkResource;
  if (parsed.sku) candidate.sku = parsed.sku;
  else delete candidate.sku;
  if (parsed.zones) candidate.zones = parsed.zones;
  kind.admit(candidate, existing, ctx);
  const op = startOperation(ctx, req, kind, candidate, "Put");
  ctx.store.put(candidate);
  return {
    status: existing ? 200 : 201,
    body: kind.render(candidate, ctx),
    headers: lroHeaders(ctx, op, false),
  };
}

/** The resource a request names, once its resource group exists and the request's conditions hold. */
function addressed(ctx: Context, route: NetworkRoute, req: ArmRequest) {
  requireResourceGroup(ctx, route.subscriptionId, route.resourceGroup);
  const id = resourceId(route.subscriptionId, route.resourceGroup, route.type, route.name);
  const existing = ctx.store.get(id);
  checkConditions(req.headers, existing?.etag, id);
  return { kind: KINDS[route.type], existing };
}

function deleteResource(ctx: Context, route: NetworkRoute, req: ArmRequest): ArmResponse {
  const { kind, existing } = addressed(ctx, route, req);
  if (!existing) return { status: 204 };
  if (existing.provisioningState === "Deleting" && ctx.operations.isInProgress(existing.operationId))
    return { status: 202, headers: lroHeaders(ctx, ctx.operations.get(existing.operationId!)!, true) };
  assertNotBusy(ctx, existing);
  kind.checkDelete?.(existing, ctx);
  const op = startOperation(ctx, req, kind, existing, "Delete");
  return { status: 202, headers: lroHeaders(ctx, op, true) };
}

function patchTags(ctx: Context, route: NetworkRoute, req: ArmRequest): ArmResponse {
  const { kind, existing } = addressed(ctx, route, req);
  if (!existing) throw resourceNotFound(`Microsoft.Network/${route.type}`, route.name, route.resourceGroup);
  assertNotBusy(ctx, existing);
  existing.tags = BodyObject.root(req.body).tags();
  existing.etag = newEtag();
  return { status: 200, body: kind.render(existing, ctx) };
}

function getParent(ctx: Context, route: NetworkRoute): NetworkResource {
  requireResourceGroup(ctx, route.subscriptionId, route.resourceGroup);
  const id = resourceId(route.subscriptionId, route.resourceGroup, route.type, route.name);
  const r = ctx.store.get(id);
  if (!r) throw resourceNotFound(`Microsoft.Network/${route.type}`, route.name, route.resourceGroup);
  return r;
}

function childRequest(ctx: Context, route: NetworkRoute, req: ArmRequest): ArmResponse {
  const kind = KINDS[route.type];
  const childKind = kind.children[route.child!.segment.toLowerCase()];
  if (!childKind) throw methodNotAllowed(req.method);
  const parent = getParent(ctx, route);
  if (route.child!.action !== undefined) return childAction(ctx, route, req, parent);
  const segment = childKind.segment;
  const items = (kind.render(parent, ctx).properties as Json)[segment] as Json[];
  const name = route.child!.name;
  if (name === undefined) {
    if (req.method !== "GET") throw methodNotAllowed(req.method);
    return { status: 200, body: { value: items } };
  }
  const cid = childId(parent.id, segment, name);
  const current = items.find((c) => String(c.name).toLowerCase() === name.toLowerCase());
  if (req.method === "GET") {
    if (!current) throw childNotFound(cid);
    return { status: 200, body: current };
  }
  const { upsert, remove } = childKind;
  const writable = req.method === "PUT" ? upsert : req.method === "DELETE" ? remove : undefined;
  if (!writable) throw methodNotAllowed(req.method);
  checkConditions(req.headers, current ? parent.etag : undefined, cid);
  if (req.method === "DELETE" && !current) return { status: 204 };
  assertNotBusy(ctx, parent);
  if (req.method === "PUT") assertValidName(name);
  const properties =
    req.method === "PUT" ? upsert!(parent, name, BodyObject.root(req.body), ctx) : remove!(parent, name, ctx);
  const candidate = { ...parent, properties } as NetworkResource;
  kind.admit(candidate, parent, ctx);
  const op = startOperation(ctx, req, kind, candidate, "Put");
  ctx.store.put(candidate);
  if (req.method === "DELETE") return { status: 202, headers: lroHeaders(ctx, op, true) };
  const rendered = (kind.render(candidate, ctx).properties as Json)[segment] as Json[];
  const body = rendered.find((c) => String(c.name).toLowerCase() === name.toLowerCase());
  return { status: current ? 200 : 201, body, headers: lroHeaders(ctx, op, false) };
}

/**
 * POST to a child's operation. The one ARM has for load balancers: a rule's health, a long-running operation
 * (202, then the result at its Location) whose answer is the members' health when it completes.
 */
function childAction(
  ctx: Context,
  route: NetworkRoute,
  req: ArmRequest,
  parent: NetworkResource,
): ArmResponse {
  const { segment, name, action } = route.child!;
  const isHealth =
    route.type === "loadBalancers" &&
    segment.toLowerCase() === "loadbalancingrules" &&
    action!.toLowerCase() === "health";
  if (!isHealth) throw new ArmError(404, "NotFound", `The requested path ${req.path} was not found.`);
  if (req.method !== "POST") throw methodNotAllowed(req.method);
  const lb = parent as LoadBalancer;
  const rule = lb.properties.loadBalancingRules.find((r) => r.name.toLowerCase() === name!.toLowerCase());
  const ruleId = childId(lb.id, "loadBalancingRules", name!);
  if (!rule) throw childNotFound(ruleId);
  const op = ctx.operations.start({
    subscriptionId: ctx.subscriptionId,
    resourceId: ruleId,
    provider: "Microsoft.Network",
    location: lb.location,
    apiVersion: req.apiVersion,
    kind: "action",
    name: "GetLoadBalancingRuleHealthOperation",
    durationMs: ctx.config.operationDurationMs,
    failWith: ctx.faults.forOperation(req.method, req.path),
    // Judged when the operation completes, from the pool and the verdicts of that moment.
    result: () => {
      const now = ctx.store.get(lb.id) as LoadBalancer | undefined;
      const current = now?.properties.loadBalancingRules.find((r) => r.name === rule.name);
      return now && current ? ctx.ruleHealth.of(now, current, ruleId) : undefined;
    },
    onSuccess: () => undefined,
    onFailure: () => undefined,
  });
  return { status: 202, headers: lroHeaders(ctx, op, true) };
}

export function handleNetwork(ctx: Context, route: Route, req: ArmRequest): ArmResponse {
  if (route.kind === "networkList") {
    if (req.method !== "GET") throw methodNotAllowed(req.method);
    if (route.resourceGroup) requireResourceGroup(ctx, route.subscriptionId, route.resourceGroup);
    const all = route.resourceGroup
      ? ctx.store.inResourceGroup(route.subscriptionId, route.resourceGroup)
      : [...ctx.store.resources.values()];
    const kind = KINDS[route.type];
    return page(
      ctx,
      req,
      all.filter((r) => r.type === route.type).map((r) => kind.render(r, ctx)),
    );
  }
  if (route.kind === "networkOperation") return pollOperation(ctx, route, req);
  if (route.kind !== "network") throw methodNotAllowed(req.method);
  if (route.child) return childRequest(ctx, route, req);
  switch (req.method) {
    case "GET":
      return { status: 200, body: KINDS[route.type].render(getParent(ctx, route), ctx) };
    case "PUT":
      return putResource(ctx, route, req);
    case "DELETE":
      return deleteResource(ctx, route, req);
    case "PATCH":
      return patchTags(ctx, route, req);
    default:
      throw methodNotAllowed(req.method);
  }
}

/** ARM's paging: `{ value, nextLink }`, the link carrying a $skiptoken the next request hands back. */
function page(ctx: Context, req: ArmRequest, items: Json[]): ArmResponse {
  const size = ctx.config.listPageSize;
  if (size <= 0) return { status: 200, body: { value: items } };
  const start = Number(req.query.get("$skiptoken") ?? "0") || 0;
  const body: Json = { value: items.slice(start, start + size) };
  if (start + size < items.length)
    body.nextLink = `${ctx.baseUrl}${req.path}?api-version=${req.apiVersion}&%24skiptoken=${start + size}`;
  return { status: 200, body };
}

function pollOperation(
  ctx: Context,
  route: Extract<Route, { kind: "networkOperation" }>,
  req: ArmRequest,
): ArmResponse {
  if (req.method !== "GET") throw methodNotAllowed(req.method);
  const op = ctx.operations.get(route.operationId);
  if (!op || op.provider !== "Microsoft.Network" || normalizeLocation(route.location) !== op.location)
    throw operationNotFound(route.operationId);
  const retry: Record<string, string> =
    op.status === "InProgress" && ctx.config.retryAfterSeconds > 0
      ? { "Retry-After": String(ctx.config.retryAfterSeconds) }
      : {};
  if (!route.result) return { status: 200, body: operationStatusBody(op), headers: retry };
  if (op.status === "InProgress")
    return { status: 202, headers: { ...retry, Location: resultUrl(ctx.baseUrl, op) } };
  if (op.status !== "Succeeded") return { status: 400, body: { error: { ...op.error, details: [] } } };
  if (op.kind === "action") {
    const body = op.result?.();
    if (body === undefined) throw childNotFound(op.resourceId);
    return { status: 200, body };
  }
  const r = ctx.store.get(op.resourceId);
  if (op.kind === "delete" || !r) return { status: 204 };
  return { status: 200, body: KINDS[r.type].render(r, ctx) };
}
