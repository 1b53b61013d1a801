import { describe, expect, it } from "vitest";
import { parseIP } from "./address.ts";
import {
  comparePools,
  parsePool,
  poolAddresses,
  poolAllowsService,
  poolContains,
  poolFamilies,
  poolSize,
  type PoolProblem,
} from "./pool.ts";
import { pool } from "../test/unit/support/metal.ts";

function problems(spec: unknown): PoolProblem[] {
  const parsed = parsePool("p", spec);
  if (parsed.ok) throw new Error("expected the spec to be rejected");
  return parsed.problems;
}

function ip(text: string) {
  const parsed = parseIP(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

function first<T>(iterable: Iterable<T>, count: number): T[] {
  const out: T[] = [];
  for (const item of iterable) {
    if (out.length === count) break;
    out.push(item);
  }
  return out;
}

describe("parsePool", () => {
  it("normalizes a MetalLB-shaped spec, with defaults", () => {
    const parsed = parsePool("default", { addresses: ["192.168.10.0/24", "fd00::/120"] });
    expect(parsed).toEqual({
      ok: true,
      pool: {
        name: "default",
        ranges: [
          { family: "IPv4", first: 0xc0a80a00n, last: 0xc0a80affn },
          { family: "IPv6", first: 0xfd00n << 112n, last: (0xfd00n << 112n) + 255n },
        ],
        autoAssign: true,
        avoidBuggyIPs: false,
        priority: undefined,
        namespaces: [],
        namespaceSelectors: [],
        serviceSelectors: [],
      },
    });
  });

  it("keeps serviceAllocation as written", () => {
    const p = pool("gold", {
      addresses: ["10.0.0.0/30"],
      autoAssign: false,
      avoidBuggyIPs: true,
      serviceAllocation: {
        priority: 5,
        namespaces: ["prod"],
        namespaceSelectors: [{ matchLabels: { team: "a" } }],
        serviceSelectors: [{ matchExpressions: [{ key: "tier", operator: "In", values: ["gold"] }] }],
      },
    });
    expect(p.autoAssign).toBe(false);
    expect(p.avoidBuggyIPs).toBe(true);
    expect(p.priority).toBe(5);
    expect(p.namespaces).toEqual(["prod"]);
    expect(p.namespaceSelectors).toEqual([{ matchLabels: { team: "a" } }]);
    expect(p.serviceSelectors).toHaveLength(1);
  });

  it("reports every problem with its field", () => {
    expect(problems(null)).toEqual([
      { field: "spec", message: "spec must be an object with an addresses list" },
    ]);
    expect(problems({})[0]?.field).toBe("spec.addresses");
    expect(problems({ addresses: [] })[0]?.message).toMatch(/at least one CIDR/);
    const many = problems({
      addresses: ["10.0.0.0/24", 7, "10.0.0.128/25", "nonsense"],
      autoAssign: "yes",
      avoidBuggyIPs: 1,
      autoassign: true,
      serviceAllocation: {
        priority: 1.5,
        namespaces: "prod",
        namespaceSelectors: [{ matchLabels: { a: 1 } }],
        serviceSelectors: {},
        prio: 1,
      },
    });
    expect(many.map((p) => p.field)).toEqual([
      "spec.autoassign",
      "spec.addresses[1]",
      "spec.addresses[2]",
      "spec.addresses[3]",
      "spec.autoAssign",
      "spec.avoidBuggyIPs",
      "spec.serviceAllocation.prio",
      "spec.serviceAllocation.priority",
      "spec.serviceAllocation.namespaces",
      "spec.serviceAllocation.namespaceSelectors[0]",
      "spec.serviceAllocation.serviceSelectors",
    ]);
    expect(many[2]?.message).toBe(
      "overlaps spec.addresses[0] (10.0.0.128-10.0.0.255); remove or merge one of them",
    );
    expect(many[5]?.message).toBe("must be true or false (got 1)");
    expect(many[9]?.message).toMatch(/matchLabels must map label keys to string values/);
  });

  it("rejects a serviceAllocation that is not an object", () => {
    expect(problems({ addresses: ["10.0.0.0/30"], serviceAllocation: [] })[0]?.field).toBe(
      "spec.serviceAllocation",
    );
  });
});

describe("pool size, membership and iteration", () => {
  it("counts exactly, per family and overall", () => {
    const p = pool("p", { addresses: ["10.0.0.0/24", "10.0.1.10-10.0.1.19", "fd00::/64"] });
    expect(poolSize(p, "IPv4")).toBe(266n);
    expect(poolSize(p, "IPv6")).toBe(2n ** 64n);
    expect(poolSize(p)).toBe(266n + 2n ** 64n);
    expect(poolFamilies(p)).toEqual(["IPv4", "IPv6"]);
  });

  it("handles the whole IPv6 space without materializing it", () => {
    const p = pool("all", { addresses: ["::/0"] });
    expect(poolSize(p)).toBe(2n ** 128n);
    expect(first(poolAddresses(p), 3).map((a) => a.text)).toEqual(["::", "::1", "::2"]);
    expect(poolContains(p, ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"))).toBe(true);
  });

  it("iterates ranges in the order written, each ascending", () => {
    const p = pool("p", { addresses: ["10.0.0.8/31", "10.0.0.1-10.0.0.2", "fd00::/127"] });
    expect([...poolAddresses(p)].map((a) => a.text)).toEqual([
      "10.0.0.8",
      "10.0.0.9",
      "10.0.0.1",
      "10.0.0.2",
      "fd00::",
      "fd00::1",
    ]);
    expect([...poolAddresses(p, "IPv6")].map((a) => a.text)).toEqual(["fd00::", "fd00::1"]);
  });

  it("tests membership by family and bounds", () => {
    const p = pool("p", { addresses: ["10.0.0.10-10.0.0.20"] });
    expect(poolContains(p, ip("10.0.0.10"))).toBe(true);
    expect(poolContains(p, ip("10.0.0.20"))).toBe(true);
    expect(poolContains(p, ip("10.0.0.9"))).toBe(false);
    expect(poolContains(p, ip("10.0.0.21"))).toBe(false);
    expect(poolContains(p, ip("::a00:a"))).toBe(false);
  });

  it("skips .0 and .255 everywhere with avoidBuggyIPs, IPv6 untouched", () => {
    const p = pool("p", { addresses: ["10.0.0.254-10.0.1.1", "fd00::/120"], avoidBuggyIPs: true });
    expect([...poolAddresses(p, "IPv4")].map((a) => a.text)).toEqual(["10.0.0.254", "10.0.1.1"]);
    expect(poolSize(p, "IPv4")).toBe(2n);
    expect(poolSize(p, "IPv6")).toBe(256n);
    expect(poolContains(p, ip("10.0.1.0"))).toBe(false);
    expect(poolContains(p, ip("fd00::ff"))).toBe(true);
    const wide = pool("w", { addresses: ["10.0.0.0/16"], avoidBuggyIPs: true });
    expect(poolSize(wide)).toBe(65536n - 512n);
  });
});

describe("poolAllowsService", () => {
  const svc = (namespace: string, labels = {}, namespaceLabels = {}) => ({
    namespace,
    labels,
    namespaceLabels,
  });

  it("allows everyone without serviceAllocation", () => {
    expect(poolAllowsService(pool("p", { addresses: ["10.0.0.0/30"] }), svc("any"))).toBe(true);
  });

  it("lets namespaces and namespaceSelectors each admit a namespace (OR)", () => {
    const p = pool("p", {
      addresses: ["10.0.0.0/30"],
      serviceAllocation: { namespaces: ["prod"], namespaceSelectors: [{ matchLabels: { team: "a" } }] },
    });
    expect(poolAllowsService(p, svc("prod"))).toBe(true);
    expect(poolAllowsService(p, svc("dev", {}, { team: "a" }))).toBe(true);
    expect(poolAllowsService(p, svc("dev", {}, { team: "b" }))).toBe(false);
  });

  it("requires a matching service selector as well (AND)", () => {
    const p = pool("p", {
      addresses: ["10.0.0.0/30"],
      serviceAllocation: {
        namespaces: ["prod"],
        serviceSelectors: [{ matchLabels: { tier: "gold" } }, { matchLabels: { tier: "silver" } }],
      },
    });
    expect(poolAllowsService(p, svc("prod", { tier: "silver" }))).toBe(true);
    expect(poolAllowsService(p, svc("prod", { tier: "bronze" }))).toBe(false);
    expect(poolAllowsService(p, svc("dev", { tier: "gold" }))).toBe(false);
  });
});

describe("comparePools", () => {
  it("orders by priority (lower first), unset last, then by name", () => {
    const pools = [
      pool("z-none", { addresses: ["10.0.0.0/32"] }),
      pool("b-10", { addresses: ["10.0.0.1/32"], serviceAllocation: { priority: 10 } }),
      pool("a-none", { addresses: ["10.0.0.2/32"] }),
      pool("c-1", { addresses: ["10.0.0.3/32"], serviceAllocation: { priority: 1 } }),
      pool("a-10", { addresses: ["10.0.0.4/32"], serviceAllocation: { priority: 10 } }),
      pool("neg", { addresses: ["10.0.0.5/32"], serviceAllocation: { priority: -1 } }),
    ];
    expect(pools.sort(comparePools).map((p) => p.name)).toEqual([
      "neg",
      "c-1",
      "a-10",
      "b-10",
      "a-none",
      "z-none",
    ]);
  });
});
