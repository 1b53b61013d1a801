import { expect, test } from "vitest";
import {
  AWS_LOAD_BALANCER_CLASS,
  AZURE_LOAD_BALANCER_CLASS,
  METAL_LOAD_BALANCER_CLASS,
} from "../../providers/classes.ts";
import { PROVIDER_NAMES } from "../../providers/registry.ts";
import {
  classConditions,
  decideConditions,
  gatewayControllerName,
  isOwnClass,
  isSupportedBundle,
  type Condition,
  type GatewayClass,
} from "./classes.ts";

const METAL = METAL_LOAD_BALANCER_CLASS;
const NOW = new Date("2026-03-04T05:06:07.890Z");
const NOW_TEXT = "2026-03-04T05:06:07Z";
const EARLIER = "2025-01-01T00:00:00Z";
/** What the CRD's default puts on a new class before any controller looked. */
const PENDING: Condition = {
  type: "Accepted",
  status: "Unknown",
  reason: "Pending",
  message: "Waiting for controller",
  lastTransitionTime: "1970-01-01T00:00:00Z",
};

function gc(
  opts: { controller?: string; generation?: number; ref?: boolean; conditions?: Condition[] } = {},
) {
  const obj: GatewayClass = {
    metadata: { name: "portico", generation: opts.generation ?? 3 },
    spec: {
      controllerName: opts.controller ?? METAL,
      ...(opts.ref
        ? { parametersRef: { group: "example.com", kind: "Config", name: "cfg", namespace: "ns" } }
        : {}),
    },
  };
  if (opts.conditions) obj.status = { conditions: opts.conditions };
  return obj;
}

test("each provider serves the GatewayClasses named after its own Service class", () => {
  expect(Object.fromEntries(PROVIDER_NAMES.map((p) => [p, gatewayControllerName(p)]))).toEqual({
    aws: AWS_LOAD_BALANCER_CLASS,
    azure: AZURE_LOAD_BALANCER_CLASS,
    metal: METAL_LOAD_BALANCER_CLASS,
  });
});

test("only classes naming this controller exactly are its own", () => {
  expect(isOwnClass(gc(), METAL)).toBe(true);
  expect(isOwnClass(gc({ controller: AWS_LOAD_BALANCER_CLASS }), METAL)).toBe(false);
  expect(isOwnClass(gc({ controller: "example.com/gateway" }), METAL)).toBe(false);
  expect(isOwnClass(gc({ controller: `${METAL}/x` }), METAL)).toBe(false);
  expect(isOwnClass({}, METAL)).toBe(false);
});

test("another controller's class is never given conditions, whatever it holds", () => {
  for (const ref of [false, true])
    for (const version of ["v1.6.3", "v1.2.0", undefined])
      for (const conditions of [undefined, [PENDING]])
        expect(
          classConditions(gc({ controller: "example.com/gateway", ref, conditions }), METAL, version, NOW),
        ).toBeUndefined();
});

test("bundle versions v1.5.x and v1.6.x are supported, no other and no missing one", () => {
  for (const v of ["v1.5.0", "v1.5.1", "v1.6.0", "v1.6.3", "v1.6.12"])
    expect(isSupportedBundle(v)).toBe(true);
  for (const v of [
    undefined,
    "",
    "v1.4.1",
    "v1.7.0",
    "v2.6.0",
    "1.6.3",
    "v1.6",
    "v1.6.3-rc.1",
    "v1.60.0",
    "dev",
  ])
    expect(isSupportedBundle(v)).toBe(false);
});

test("a class without parameters on a supported version: Accepted and SupportedVersion True", () => {
  expect(classConditions(gc({ conditions: [PENDING] }), METAL, "v1.6.3", NOW)).toEqual([
    {
      type: "Accepted",
      status: "True",
      reason: "Accepted",
      message: "Portico serves the Gateways of this class",
      observedGeneration: 3,
      lastTransitionTime: NOW_TEXT,
    },
    {
      type: "SupportedVersion",
      status: "True",
      reason: "SupportedVersion",
      message: "Gateway API v1.6.3 is supported",
      observedGeneration: 3,
      lastTransitionTime: NOW_TEXT,
    },
  ]);
});

test("a parametersRef is refused, naming the field, what it points at and the fix", () => {
  const [accepted, version] = decideConditions(gc({ ref: true }), "v1.5.1");
  expect(accepted).toEqual({
    type: "Accepted",
    status: "False",
    reason: "InvalidParameters",
    message:
      "spec.parametersRef is set (Config.example.com ns/cfg), but Portico takes no parameters for a GatewayClass: " +
      "remove spec.parametersRef from the GatewayClass",
  });
  expect(version).toMatchObject({ status: "True", reason: "SupportedVersion" });
  const coreRef = {
    spec: { controllerName: METAL, parametersRef: { group: "", kind: "ConfigMap", name: "c" } },
  };
  expect(decideConditions(coreRef, "v1.6.3")[0]!.message).toContain("(ConfigMap c)");
  // A null parametersRef (as some clients write an unset field) is no parametersRef.
  const nullRef = { spec: { controllerName: METAL, parametersRef: null } };
  expect(decideConditions(nullRef, "v1.6.3")[0]).toMatchObject({ status: "True", reason: "Accepted" });
});

test("an unsupported or missing bundle version: both conditions False, the message naming installed and supported", () => {
  for (const [version, installed] of [
    ["v1.4.1", "the installed Gateway API CRDs are v1.4.1"],
    ["v1.7.0", "the installed Gateway API CRDs are v1.7.0"],
    [undefined, "carry no gateway.networking.k8s.io/bundle-version annotation"],
  ] as const) {
    const [accepted, supported] = decideConditions(gc(), version);
    for (const c of [accepted, supported]) {
      expect(c).toMatchObject({ status: "False", reason: "UnsupportedVersion" });
      expect(c!.message).toContain(installed);
      expect(c!.message).toContain("Portico supports v1.5.x and v1.6.x");
    }
    expect(accepted!.type).toBe("Accepted");
    expect(supported!.type).toBe("SupportedVersion");
  }
});

test("a parametersRef on an unsupported version: Accepted names the parametersRef, SupportedVersion the version", () => {
  const [accepted, supported] = decideConditions(gc({ ref: true }), "v1.3.0");
  expect(accepted).toMatchObject({ status: "False", reason: "InvalidParameters" });
  expect(supported).toMatchObject({ status: "False", reason: "UnsupportedVersion" });
});

test("a status that already says so is not written again", () => {
  const first = classConditions(gc({ conditions: [PENDING] }), METAL, "v1.6.3", NOW)!;
  expect(classConditions(gc({ conditions: first }), METAL, "v1.6.3", new Date())).toBeUndefined();
  const refused = classConditions(gc({ ref: true }), METAL, "v1.2.0", NOW)!;
  expect(
    classConditions(gc({ ref: true, conditions: refused }), METAL, "v1.2.0", new Date()),
  ).toBeUndefined();
});

test("lastTransitionTime is kept while a condition's status stays, and moves when it changes", () => {
  const accepted: Condition = {
    type: "Accepted",
    status: "True",
    reason: "Accepted",
    message: "old words",
    observedGeneration: 2,
    lastTransitionTime: EARLIER,
  };
  const version: Condition = {
    type: "SupportedVersion",
    status: "True",
    reason: "SupportedVersion",
    message: "Gateway API v1.5.0 is supported",
    observedGeneration: 2,
    lastTransitionTime: EARLIER,
  };
  // A new generation and a new version: written again, times kept.
  const kept = classConditions(gc({ conditions: [accepted, version] }), METAL, "v1.6.3", NOW)!;
  expect(kept.map((c) => [c.observedGeneration, c.lastTransitionTime, c.message])).toEqual([
    [3, EARLIER, "Portico serves the Gateways of this class"],
    [3, EARLIER, "Gateway API v1.6.3 is supported"],
  ]);
  // A parametersRef added: Accepted turns False now, SupportedVersion keeps its time.
  const moved = classConditions(gc({ ref: true, conditions: kept }), METAL, "v1.6.3", NOW)!;
  expect(moved.map((c) => [c.status, c.lastTransitionTime])).toEqual([
    ["False", NOW_TEXT],
    ["True", EARLIER],
  ]);
});

test("other conditions keep their place and content; ours are merged by type, never duplicated", () => {
  const foreign: Condition = {
    type: "example.com/Special",
    status: "True",
    reason: "Why",
    message: "not Portico's",
    lastTransitionTime: EARLIER,
  };
  const got = classConditions(gc({ conditions: [foreign, PENDING] }), METAL, "v1.6.3", NOW)!;
  expect(got.map((c) => c.type)).toEqual(["example.com/Special", "Accepted", "SupportedVersion"]);
  expect(got[0]).toBe(foreign);
  // With no status at all, ours are added in the spec's order.
  expect(classConditions(gc(), METAL, "v1.6.3", NOW)!.map((c) => c.type)).toEqual([
    "Accepted",
    "SupportedVersion",
  ]);
});

test("a condition observed at a newer generation than the copy read is left alone", () => {
  const newer: Condition = {
    type: "Accepted",
    status: "True",
    reason: "Accepted",
    message: "Portico serves the Gateways of this class",
    observedGeneration: 9,
    lastTransitionTime: EARLIER,
  };
  // The stale copy (generation 3) would refuse it, yet Accepted stays as the newer generation saw it.
  const got = classConditions(gc({ ref: true, conditions: [newer] }), METAL, "v1.6.3", NOW)!;
  expect(got[0]).toBe(newer);
  expect(got[1]).toMatchObject({ type: "SupportedVersion", observedGeneration: 3 });
  // When nothing but newer conditions would change, nothing is written.
  const bothNewer = [newer, { ...got[1]!, observedGeneration: 9, status: "False" as const }];
  expect(classConditions(gc({ ref: true, conditions: bothNewer }), METAL, "v1.6.3", NOW)).toBeUndefined();
});

test("a class without a generation gets conditions without observedGeneration", () => {
  const noGeneration: GatewayClass = { spec: { controllerName: METAL } };
  const got = classConditions(noGeneration, METAL, "v1.6.3", NOW)!;
  expect(got.every((c) => !("observedGeneration" in c))).toBe(true);
  expect(
    classConditions({ ...noGeneration, status: { conditions: got } }, METAL, "v1.6.3", NOW),
  ).toBeUndefined();
});
