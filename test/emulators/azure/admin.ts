// The emulator's own control API under /_emulator/, for tests, benchmarks and the demo. It needs no token: it is
// not part of ARM.
//
//   GET    /_emulator/health     liveness
//   POST   /_emulator/reset      empty the subscription, operations, faults and request log
//   GET    /_emulator/requests   { total, counts: { "PUT loadBalancers": n, ... }, log: [...] }
//   DELETE /_emulator/requests   forget the request log
//   GET    /_emulator/faults     the active fault rules
//   POST   /_emulator/faults     add rules: one rule, an array, or { seed?, faults: [...] } (see faults.ts)
//   DELETE /_emulator/faults     remove every rule
//   GET    /_emulator/config     operationDurationMs, retryAfterSeconds, conflictOnConcurrentWrite, listPageSize,
//                                 tokenLifetimeSeconds, limits
//   POST   /_emulator/config     change any of them (`limits`: only the ones given)
//   GET    /_emulator/state      everything the subscription holds, rendered as ARM would
//   GET    /_emulator/throttling ARM's throttling (throttling.ts): settings, per-limit counts, throttled, floor
//   POST   /_emulator/throttling switch it on with { reserve?, scale?, overrides? }: full buckets, empty windows
//   DELETE /_emulator/throttling switch it off
//   GET    /_emulator/ruleHealth what a prober reported of the rules' members (ruleHealth.ts)
//   PUT    /_emulator/ruleHealth a prober's report, replacing the last: { rules: { <rule ID>: { <ip>: Up|Down } } }
//   DELETE /_emulator/ruleHealth no prober: every member Up again
import { validateFaultRule } from "./faults.ts";
import type { ArmResponse } from "./handlers.ts";
import { handleNetwork } from "./handlers.ts";
import { validateLimits } from "./limits.ts";
import { validateRuleHealthReport } from "./ruleHealth.ts";
import { ArmThrottling, validateThrottling } from "./throttling.ts";
import type { EmulatorServer } from "./server.ts";

const ok = (body: unknown): ArmResponse => ({ status: 200, body });
const bad = (message: string): ArmResponse => ({
  status: 400,
  body: { error: { code: "BadRequest", message } },
});

function json(raw: string): unknown {
  return raw.trim() ? (JSON.parse(raw) as unknown) : {};
}

export function handleAdmin(
  emulator: EmulatorServer,
  method: string,
  path: string,
  raw: string,
): ArmResponse {
  try {
    const key = `${method} ${path.replace(/\/+$/, "")}`;
    switch (key) {
      case "GET /_emulator/health":
        return ok({ status: "ok", subscriptionId: emulator.subscriptionId });
      case "POST /_emulator/reset":
        emulator.reset();
        return ok({ reset: true });
      case "GET /_emulator/requests": {
        const log = emulator.log.all();
        return ok({ total: log.length, counts: emulator.log.counts(), log });
      }
      case "DELETE /_emulator/requests":
        emulator.log.clear();
        return ok({ cleared: true });
      case "GET /_emulator/faults":
        return ok({ faults: emulator.faults.describe() });
      case "POST /_emulator/faults":
        return addFaults(emulator, json(raw));
      case "DELETE /_emulator/faults":
        emulator.faults.clear();
        return ok({ faults: [] });
      case "GET /_emulator/config":
        return ok(currentConfig(emulator));
      case "POST /_emulator/config":
        return changeConfig(emulator, json(raw));
      case "GET /_emulator/state":
        return ok(state(emulator));
      case "GET /_emulator/throttling":
        return ok(emulator.throttling?.describe() ?? { enabled: false });
      case "POST /_emulator/throttling":
        emulator.throttling = new ArmThrottling(validateThrottling(json(raw)));
        return ok(emulator.throttling.describe());
      case "GET /_emulator/ruleHealth":
        return ok(emulator.ruleHealth.describe());
      case "PUT /_emulator/ruleHealth":
        emulator.ruleHealth.report(validateRuleHealthReport(json(raw)));
        return ok(emulator.ruleHealth.describe());
      case "DELETE /_emulator/ruleHealth":
        emulator.ruleHealth.reset();
        return ok(emulator.ruleHealth.describe());
      case "DELETE /_emulator/throttling":
        emulator.throttling = undefined;
        return ok({ enabled: false });
      default:
        return {
          status: 404,
          body: { error: { code: "NotFound", message: `No emulator endpoint ${key}.` } },
        };
    }
  } catch (err) {
    return bad((err as Error).message);
  }
}

function addFaults(emulator: EmulatorServer, input: unknown): ArmResponse {
  const envelope = input as { seed?: unknown; faults?: unknown };
  const list = Array.isArray(input) ? input : Array.isArray(envelope.faults) ? envelope.faults : [input];
  const rules = list.map(validateFaultRule);
  if (typeof envelope.seed === "number") emulator.faults.clear(envelope.seed);
  for (const rule of rules) emulator.faults.add(rule);
  return ok({ faults: emulator.faults.describe() });
}

function currentConfig(emulator: EmulatorServer): Record<string, unknown> {
  return { ...emulator.config, tokenLifetimeSeconds: emulator.authority.tokenLifetimeSeconds };
}

function changeConfig(emulator: EmulatorServer, input: unknown): ArmResponse {
  const c = input as Record<string, unknown>;
  const nonNegative = (k: string): number | undefined => {
    if (c[k] === undefined) return undefined;
    if (typeof c[k] !== "number" || c[k] < 0) throw new Error(`"${k}" must be a non-negative number`);
    return c[k];
  };
  const duration = nonNegative("operationDurationMs");
  const retry = nonNegative("retryAfterSeconds");
  const lifetime = nonNegative("tokenLifetimeSeconds");
  const pageSize = nonNegative("listPageSize");
  if (c.conflictOnConcurrentWrite !== undefined && typeof c.conflictOnConcurrentWrite !== "boolean")
    throw new Error('"conflictOnConcurrentWrite" must be a boolean');
  const limits = c.limits === undefined ? undefined : validateLimits(c.limits);
  if (duration !== undefined) emulator.config.operationDurationMs = duration;
  if (retry !== undefined) emulator.config.retryAfterSeconds = Math.floor(retry);
  if (lifetime !== undefined) emulator.authority.tokenLifetimeSeconds = Math.floor(lifetime);
  if (pageSize !== undefined) emulator.config.listPageSize = Math.floor(pageSize);
  if (typeof c.conflictOnConcurrentWrite === "boolean")
    emulator.config.conflictOnConcurrentWrite = c.conflictOnConcurrentWrite;
  if (limits) emulator.config.limits = { ...emulator.config.limits, ...limits };
  return ok(currentConfig(emulator));
}

function state(emulator: EmulatorServer): Record<string, unknown> {
  emulator.operations.settle();
  const ctx = emulator.context();
  const resourceGroups = [...emulator.store.resourceGroups.values()].map((rg) => ({
    name: rg.name,
    location: rg.location,
    resources: emulator.store.inResourceGroup(rg.subscriptionId, rg.name).map(
      (r) =>
        handleNetwork(
          ctx,
          {
            kind: "network",
            subscriptionId: r.subscriptionId,
            resourceGroup: r.resourceGroup,
            type: r.type,
            name: r.name,
          },
          {
            method: "GET",
            path: r.id,
            query: new URLSearchParams(),
            apiVersion: "",
            headers: {},
            body: undefined,
          },
        ).body,
    ),
  }));
  return { subscriptionId: emulator.subscriptionId, resourceGroups };
}
