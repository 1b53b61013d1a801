// Microsoft.Resources resource groups: PUT/GET/HEAD/DELETE/list. Creating one is synchronous; deleting one is a
// long-running operation (202 + Location) that removes everything inside it when it completes.
import { BodyObject } from "../body.ts";
import {
  ArmError,
  invalidResourceGroupName,
  locationNotAvailable,
  locationRequired,
  methodNotAllowed,
  operationNotFound,
  resourceGroupNotFound,
} from "../errors.ts";
import type { ArmRequest, ArmResponse } from "../handlers.ts";
import { normalizeLocation, resourceGroupId } from "../ids.ts";
import { REGIONS } from "../catalog.ts";
import type { Context } from "../kinds.ts";
import type { ResourceGroup } from "../model.ts";
import { resultUrl } from "../operations.ts";
import type { Route } from "../routes.ts";

function render(rg: ResourceGroup): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: rg.id,
    name: rg.name,
    type: "Microsoft.Resources/resourceGroups",
    location: rg.location,
  };
  if (Object.keys(rg.tags).length) out.tags = rg.tags;
  out.properties = { provisioningState: rg.provisioningState };
  return out;
}

/** Resource group names: 1-90 letters, digits, `_`, `-`, `.`, `(`, `)`, not ending in a period. */
const validName = (name: string): boolean => /^[\w\-.()]{1,90}$/.test(name) && !name.endsWith(".");

export function handleResourceGroups(ctx: Context, route: Route, req: ArmRequest): ArmResponse {
  if (route.kind === "resourceGroups") {
    if (req.method !== "GET") throw methodNotAllowed(req.method);
    return { status: 200, body: { value: [...ctx.store.resourceGroups.values()].map(render) } };
  }
  if (route.kind === "resourceGroupOperation") {
    const op = ctx.operations.get(route.operationId);
    if (!op || op.provider !== "Microsoft.Resources") throw operationNotFound(route.operationId);
    if (op.status === "InProgress") {
      const headers: Record<string, string> = { Location: resultUrl(ctx.baseUrl, op) };
      if (ctx.config.retryAfterSeconds > 0) headers["Retry-After"] = String(ctx.config.retryAfterSeconds);
      return { status: 202, headers };
    }
    return { status: 200 };
  }
  if (route.kind !== "resourceGroup") throw methodNotAllowed(req.method);
  const existing = ctx.store.resourceGroup(route.subscriptionId, route.resourceGroup);
  switch (req.method) {
    case "HEAD":
      return { status: existing ? 204 : 404 };
    case "GET":
      if (!existing) throw resourceGroupNotFound(route.resourceGroup);
      return { status: 200, body: render(existing) };
    case "PUT":
      return put(ctx, route, req, existing);
    case "DELETE": {
      if (!existing) throw resourceGroupNotFound(route.resourceGroup);
      existing.provisioningState = "Deleting";
      const op = ctx.operations.start({
        subscriptionId: route.subscriptionId,
        resourceId: existing.id,
        provider: "Microsoft.Resources",
        location: existing.location,
        apiVersion: req.apiVersion,
        kind: "delete",
        name: "DeleteResourceGroup",
        durationMs: ctx.config.operationDurationMs,
        onSuccess: () => ctx.store.deleteResourceGroup(existing),
        onFailure: () => undefined,
      });
      const headers: Record<string, string> = { Location: resultUrl(ctx.baseUrl, op) };
      if (ctx.config.retryAfterSeconds > 0) headers["Retry-After"] = String(ctx.config.retryAfterSeconds);
      return { status: 202, headers };
    }
    default:
      throw methodNotAllowed(req.method);
  }
}

function put(
  ctx: Context,
  route: Extract<Route, { kind: "resourceGroup" }>,
  req: ArmRequest,
  existing: ResourceGroup | undefined,
): ArmResponse {
  if (!validName(route.resourceGroup)) throw invalidResourceGroupName(route.resourceGroup);
  const body = BodyObject.root(req.body);
  const given = body.string("location");
  if (!given) throw locationRequired();
  const location = normalizeLocation(given);
  if (!(REGIONS as readonly string[]).includes(location))
    throw locationNotAvailable(given, "Microsoft.Resources/resourceGroups", REGIONS);
  if (existing?.provisioningState === "Deleting")
    throw new ArmError(
      409,
      "ResourceGroupBeingDeleted",
      `The resource group '${existing.name}' is in deprovisioning state and cannot perform this operation.`,
    );
  if (existing && existing.location !== location)
    throw new ArmError(
      409,
      "InvalidResourceGroupLocation",
      `Invalid resource group location '${location}'. The Resource group already exists in location '${existing.location}'.`,
    );
  const rg: ResourceGroup = existing ?? {
    id: resourceGroupId(route.subscriptionId, route.resourceGroup),
    name: route.resourceGroup,
    subscriptionId: route.subscriptionId,
    location,
    tags: {},
    provisioningState: "Succeeded",
  };
  rg.tags = body.tags();
  ctx.store.putResourceGroup(rg);
  return { status: existing ? 200 : 201, body: render(rg) };
}
