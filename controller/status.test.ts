import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import {
  PORTICO_CONDITIONS,
  READY_CONDITION,
  releasePatch,
  SERVING_CONDITION,
  statusPatch,
} from "./status.ts";
import { service } from "../test/unit/support/controllerObjects.ts";

const ready = { status: "True" as const, reason: "Provisioned", message: "ok" };
const ROOT = join(import.meta.dirname, "..");

test("a new Service gets its ingress and the condition", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  expect(statusPatch(service(), [{ hostname: "lb.example" }], ready, now)).toEqual({
    status: {
      loadBalancer: { ingress: [{ hostname: "lb.example" }] },
      conditions: [
        {
          type: READY_CONDITION,
          status: "True",
          reason: "Provisioned",
          message: "ok",
          lastTransitionTime: now,
        },
      ],
    },
  });
});

test("nothing to write when the status already says it: no-change resyncs write nothing", () => {
  const svc = service();
  svc.status = {
    loadBalancer: { ingress: [{ hostname: "lb.example" }] },
    conditions: [
      {
        type: READY_CONDITION,
        status: "True",
        reason: "Provisioned",
        message: "ok",
        lastTransitionTime: new Date(),
      },
    ],
  };
  expect(statusPatch(svc, [{ hostname: "lb.example" }], ready)).toBeUndefined();
  expect(statusPatch(svc, undefined, ready)).toBeUndefined();
});

test("the transition time moves only when the status flips", () => {
  const then = new Date("2025-01-01T00:00:00Z");
  const svc = service();
  svc.status = {
    conditions: [
      {
        type: READY_CONDITION,
        status: "False",
        reason: "CloudUnavailable",
        message: "x",
        lastTransitionTime: then,
      },
    ],
  };
  const sameStatus = statusPatch(svc, undefined, {
    status: "False",
    reason: "NodePortsDisabled",
    message: "y",
  });
  expect(sameStatus?.status.conditions?.[0]?.lastTransitionTime).toBe(then);
  const flipped = statusPatch(svc, undefined, ready, new Date("2026-01-01T00:00:00Z"));
  expect(flipped?.status.conditions?.[0]?.lastTransitionTime).toEqual(new Date("2026-01-01T00:00:00Z"));
});

test("removing Portico's condition deletes only it; clearing the ingress writes an empty list", () => {
  const svc = service();
  svc.status = {
    loadBalancer: { ingress: [{ ip: "1.2.3.4" }] },
    conditions: [
      { type: READY_CONDITION, status: "True", reason: "r", message: "m", lastTransitionTime: new Date() },
    ],
  };
  expect(statusPatch(svc, [], undefined)).toEqual({
    status: { loadBalancer: { ingress: [] }, conditions: [{ type: READY_CONDITION, $patch: "delete" }] },
  });
  expect(statusPatch(service(), undefined, undefined)).toBeUndefined();
});

test("ingress order does not matter; ipMode does", () => {
  const svc = service();
  svc.status = { loadBalancer: { ingress: [{ ip: "1.1.1.1" }, { ip: "2.2.2.2" }] } };
  expect(statusPatch(svc, [{ ip: "2.2.2.2" }, { ip: "1.1.1.1" }], undefined)).toBeUndefined();
  expect(
    statusPatch(
      svc,
      [
        { ip: "2.2.2.2", ipMode: "VIP" },
        { ip: "1.1.1.1", ipMode: "VIP" },
      ],
      undefined,
    ),
  ).toBeDefined();
});

test("letting a Service go takes back its ingress and every condition type Portico owns, and only those", () => {
  const svc = service();
  const written = (type: string) => ({
    type,
    status: "True",
    reason: "r",
    message: "m",
    lastTransitionTime: new Date(),
  });
  svc.status = {
    loadBalancer: { ingress: [{ ip: "1.2.3.4" }] },
    conditions: [...PORTICO_CONDITIONS.map(written), written("example.com/Theirs")],
  };
  expect(releasePatch(svc)).toEqual({
    status: {
      loadBalancer: { ingress: [] },
      conditions: PORTICO_CONDITIONS.map((type) => ({ type, $patch: "delete" })),
    },
  });
  // Serving alone (LoadBalancerReady gone already, as a let-go that stopped half-way leaves it) goes as well.
  svc.status = { conditions: [written(SERVING_CONDITION), written("example.com/Theirs")] };
  expect(releasePatch(svc)).toEqual({
    status: { conditions: [{ type: SERVING_CONDITION, $patch: "delete" }] },
  });
  // Nothing of Portico's left: nothing to write.
  svc.status = { conditions: [written("example.com/Theirs")] };
  expect(releasePatch(svc)).toBeUndefined();
});

test("every portico.io condition type the code spells out is one the let-go path removes", () => {
  // A condition type is a string literal, CamelCase after the prefix (annotation keys and API groups are not).
  const named = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts"))
        for (const m of readFileSync(join(ROOT, path), "utf8").matchAll(/["'`](portico\.io\/[A-Z]\w*)["'`]/g))
          named.add(m[1]!);
    }
  };
  for (const dir of ["controller", "providers", "shared", "speaker"]) walk(dir);
  expect([...named].sort()).toEqual([...PORTICO_CONDITIONS].sort());
});
