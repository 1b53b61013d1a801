import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import { refusalText } from "./allocationErrors.ts";
import type { AllocationError, AssignResult } from "../../shared/allocationTypes.ts";
import { pool, service, tcp } from "../../test/unit/support/metal.ts";

function addressesOf(result: AssignResult): string[] {
  if (!result.ok) throw new Error(`assignment failed: ${result.error.message}`);
  return result.addresses.map((a) => a.address);
}

function errorOf(result: AssignResult): AllocationError {
  if (result.ok)
    throw new Error(`expected a failure, got ${result.addresses.map((a) => a.address).join(",")}`);
  return result.error;
}

describe("automatic assignment", () => {
  it("hands out addresses in pool order and names the pool", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.10-10.0.0.12"] })]);
    const first = allocator.assign(service("ns/a"));
    expect(first).toEqual({
      ok: true,
      addresses: [{ address: "10.0.0.10", family: "IPv4", pool: "p" }],
      changed: true,
      skipped: [],
      replaced: [],
    });
    expect(addressesOf(allocator.assign(service("ns/b")))).toEqual(["10.0.0.11"]);
    expect(addressesOf(allocator.assign(service("ns/c")))).toEqual(["10.0.0.12"]);
  });

  it("is idempotent: assigning again returns the same address, unchanged", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.0/29"] })]);
    const first = addressesOf(allocator.assign(service("ns/a")));
    addressesOf(allocator.assign(service("ns/b")));
    const again = allocator.assign(service("ns/a"));
    expect(addressesOf(again)).toEqual(first);
    expect(again.ok && again.changed).toBe(false);
  });

  it("reports exhaustion with the pools tried and leaves state untouched", () => {
    const allocator = new Allocator([pool("tiny", { addresses: ["10.0.0.1/32"] })]);
    addressesOf(allocator.assign(service("ns/a")));
    const error = errorOf(allocator.assign(service("ns/b")));
    expect(error).toMatchObject({ reason: "PoolExhausted", family: "IPv4", pools: ["tiny"] });
    expect(error.message).toMatch(/no free IPv4 address left in IPAddressPool tiny; add addresses/);
    expect(allocator.addressesOf("ns/b")).toEqual([]);
    expect(allocator.poolCounts("tiny")).toMatchObject({ assignedIPv4: 1n, availableIPv4: 0n });
  });

  it("reuses released addresses", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.1-10.0.0.2"] })]);
    addressesOf(allocator.assign(service("ns/a")));
    addressesOf(allocator.assign(service("ns/b")));
    expect(allocator.release("ns/a")).toEqual(["10.0.0.1"]);
    expect(allocator.release("ns/a")).toEqual([]);
    expect(addressesOf(allocator.assign(service("ns/c")))).toEqual(["10.0.0.1"]);
  });

  it("never uses .0 or .255 with avoidBuggyIPs", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.254-10.0.1.1"], avoidBuggyIPs: true })]);
    expect(addressesOf(allocator.assign(service("ns/a")))).toEqual(["10.0.0.254"]);
    expect(addressesOf(allocator.assign(service("ns/b")))).toEqual(["10.0.1.1"]);
    expect(errorOf(allocator.assign(service("ns/c"))).reason).toBe("PoolExhausted");
  });

  it("counts assigned and available addresses per pool and family", () => {
    const allocator = new Allocator([
      pool("a", { addresses: ["10.0.0.0/30", "fd00::/126"] }),
      pool("b", { addresses: ["10.0.1.0/24"], avoidBuggyIPs: true }),
    ]);
    addressesOf(allocator.assign(service("ns/a")));
    addressesOf(allocator.assign(service("ns/b", { ipFamilies: ["IPv6"] })));
    expect(allocator.allPoolCounts()).toEqual([
      { pool: "a", assignedIPv4: 1n, assignedIPv6: 1n, availableIPv4: 3n, availableIPv6: 3n },
      { pool: "b", assignedIPv4: 0n, assignedIPv6: 0n, availableIPv4: 254n, availableIPv6: 0n },
    ]);
    expect(allocator.poolCounts("missing")).toBeUndefined();
  });

  it("refuses two pools with one name", () => {
    expect(
      () =>
        new Allocator([pool("p", { addresses: ["10.0.0.0/30"] }), pool("p", { addresses: ["10.0.1.0/30"] })]),
    ).toThrow(/two IPAddressPools are named p/);
  });
});

describe("pool choice: priority, selectors, autoAssign", () => {
  it("prefers the lowest priority number, then pools without priority, falling through when full", () => {
    const allocator = new Allocator([
      pool("unset", { addresses: ["10.0.3.1/32"] }),
      pool("second", { addresses: ["10.0.2.1/32"], serviceAllocation: { priority: 20 } }),
      pool("first", { addresses: ["10.0.1.1/32"], serviceAllocation: { priority: 10 } }),
    ]);
    const pools = ["ns/a", "ns/b", "ns/c"].map((key) => {
      const result = allocator.assign(service(key));
      return result.ok ? result.addresses[0]?.pool : result.error.reason;
    });
    expect(pools).toEqual(["first", "second", "unset"]);
    expect(errorOf(allocator.assign(service("ns/d")))).toMatchObject({
      reason: "PoolExhausted",
      pools: ["first", "second", "unset"],
    });
  });

  it("skips pools whose selectors do not match the Service", () => {
    const allocator = new Allocator([
      pool("team-a", {
        addresses: ["10.0.1.0/30"],
        serviceAllocation: { priority: 1, namespaceSelectors: [{ matchLabels: { team: "a" } }] },
      }),
      pool("gold", {
        addresses: ["10.0.2.0/30"],
        serviceAllocation: { priority: 2, serviceSelectors: [{ matchLabels: { tier: "gold" } }] },
      }),
      pool("shared", { addresses: ["10.0.9.0/30"] }),
    ]);
    expect(addressesOf(allocator.assign(service("a/x", { namespaceLabels: { team: "a" } })))).toEqual([
      "10.0.1.0",
    ]);
    expect(addressesOf(allocator.assign(service("b/x", { labels: { tier: "gold" } })))).toEqual(["10.0.2.0"]);
    expect(addressesOf(allocator.assign(service("b/y")))).toEqual(["10.0.9.0"]);
  });

  it("says which pools exclude a Service when selectors leave it no pool", () => {
    const allocator = new Allocator([
      pool("team-a", { addresses: ["10.0.1.0/30"], serviceAllocation: { namespaces: ["a"], priority: 1 } }),
      pool("team-b", { addresses: ["10.0.2.0/30"], serviceAllocation: { namespaces: ["b"] } }),
      pool("manual", { addresses: ["10.0.3.0/30"], autoAssign: false }),
    ]);
    const error = errorOf(allocator.assign(service("c/x")));
    expect(error).toMatchObject({ reason: "PoolDoesNotAllowService", pool: "team-a" });
    expect(error.message).toMatch(/^IPAddressPools team-a, team-b do not serve Services in namespace c/);
  });

  it("keeps an address taken from an autoAssign=false pool after the request is removed", () => {
    const allocator = new Allocator([
      pool("auto", { addresses: ["10.0.1.0/30"] }),
      pool("manual", { addresses: ["10.0.2.0/30"], autoAssign: false }),
    ]);
    expect(addressesOf(allocator.assign(service("ns/a"), { addresses: ["10.0.2.1"] }))).toEqual(["10.0.2.1"]);
    expect(addressesOf(allocator.assign(service("ns/a")))).toEqual(["10.0.2.1"]);
  });

  it("uses autoAssign=false pools only when named or when the requested address is in them", () => {
    const allocator = new Allocator([
      pool("expensive", { addresses: ["42.176.25.64/30"], autoAssign: false }),
    ]);
    expect(errorOf(allocator.assign(service("ns/auto")))).toMatchObject({
      reason: "FamilyUnavailable",
      family: "IPv4",
    });
    expect(addressesOf(allocator.assign(service("ns/named"), { pool: "expensive" }))).toEqual([
      "42.176.25.64",
    ]);
    expect(addressesOf(allocator.assign(service("ns/asked"), { addresses: ["42.176.25.66"] }))).toEqual([
      "42.176.25.66",
    ]);
  });

  it("honours a named pool even when another pool is preferred", () => {
    const allocator = new Allocator([
      pool("preferred", { addresses: ["10.0.1.0/30"], serviceAllocation: { priority: 1 } }),
      pool("other", { addresses: ["10.0.2.0/30"] }),
    ]);
    expect(addressesOf(allocator.assign(service("ns/a"), { pool: "other" }))).toEqual(["10.0.2.0"]);
  });

  it("rejects unknown pools and pools whose selectors exclude the Service", () => {
    const allocator = new Allocator([
      pool("prod-only", { addresses: ["10.0.1.0/30"], serviceAllocation: { namespaces: ["prod"] } }),
    ]);
    const missing = errorOf(
      allocator.assign(service("dev/a"), {
        pool: "gold",
        poolField: 'metadata.annotations["metallb.io/address-pool"]',
      }),
    );
    expect(missing).toMatchObject({ reason: "PoolNotFound", pool: "gold" });
    // The field goes before the message once, where the refusal is told.
    expect(refusalText(missing)).toBe(
      'metadata.annotations["metallb.io/address-pool"]: IPAddressPool "gold" does not exist ' +
        "(pools: prod-only); fix the name or create the pool",
    );
    const excluded = errorOf(allocator.assign(service("dev/a"), { pool: "prod-only" }));
    expect(excluded).toMatchObject({ reason: "PoolDoesNotAllowService", pool: "prod-only" });
    expect(excluded.message).toMatch(/namespace dev/);
    expect(addressesOf(allocator.assign(service("prod/a"), { pool: "prod-only" }))).toEqual(["10.0.1.0"]);
  });

  it("moves a Service when its named pool changes, freeing the old address", () => {
    const allocator = new Allocator([
      pool("one", { addresses: ["10.0.1.0/30"] }),
      pool("two", { addresses: ["10.0.2.0/30"] }),
    ]);
    expect(addressesOf(allocator.assign(service("ns/a"), { pool: "one" }))).toEqual(["10.0.1.0"]);
    expect(addressesOf(allocator.assign(service("ns/a"), { pool: "two" }))).toEqual(["10.0.2.0"]);
    expect(allocator.servicesUsing("10.0.1.0")).toEqual([]);
  });

  it("keeps an existing address when a higher-priority pool appears (no needless moves)", () => {
    const low = pool("low", { addresses: ["10.0.2.0/30"] });
    const before = new Allocator([low]);
    addressesOf(before.assign(service("ns/a")));
    const after = before.withPools([
      low,
      pool("high", { addresses: ["10.0.1.0/30"], serviceAllocation: { priority: 0 } }),
    ]);
    expect(addressesOf(after.assign(service("ns/a")))).toEqual(["10.0.2.0"]);
    expect(addressesOf(after.assign(service("ns/b")))).toEqual(["10.0.1.0"]);
  });
});

describe("requested addresses", () => {
  const pools = [
    // Without the priority, "buggy" would come first: unprioritised pools are ordered by name.
    pool("p", { addresses: ["10.0.0.0/29", "fd00::/125"], serviceAllocation: { priority: 1 } }),
    pool("buggy", { addresses: ["10.0.1.0/24"], avoidBuggyIPs: true }),
  ];

  it("gives the requested address when it is in a pool and free", () => {
    const allocator = new Allocator(pools);
    expect(addressesOf(allocator.assign(service("ns/a"), { addresses: ["10.0.0.5"] }))).toEqual(["10.0.0.5"]);
    // Automatic assignment then works around it.
    expect(addressesOf(allocator.assign(service("ns/b")))).toEqual(["10.0.0.0"]);
  });

  it("accepts non-canonical spellings and answers canonically", () => {
    const allocator = new Allocator(pools);
    expect(
      addressesOf(
        allocator.assign(service("ns/a", { ipFamilies: ["IPv6"] }), { addresses: [" FD00:0::0005 "] }),
      ),
    ).toEqual(["fd00::5"]);
  });

  it("rejects an address outside every pool, naming the field", () => {
    const allocator = new Allocator(pools);
    const error = errorOf(
      allocator.assign(service("ns/a"), {
        addresses: ["192.168.1.1"],
        addressesField: "spec.loadBalancerIP",
      }),
    );
    expect(error).toEqual({
      reason: "AddressNotInAnyPool",
      address: "192.168.1.1",
      field: "spec.loadBalancerIP",
      message:
        "192.168.1.1 is not in any IPAddressPool; request an address " +
        "from a pool or add it to a pool's spec.addresses",
    });
  });

  it("explains that avoidBuggyIPs excludes a requested .0 or .255", () => {
    const error = errorOf(new Allocator(pools).assign(service("ns/a"), { addresses: ["10.0.1.255"] }));
    expect(error.reason).toBe("AddressNotInAnyPool");
    expect(error.message).toMatch(/skipped by IPAddressPool buggy because its avoidBuggyIPs is on/);
  });

  it("rejects a taken address, saying by whom", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/owner"), { addresses: ["10.0.0.3"] }));
    const error = errorOf(allocator.assign(service("ns/late"), { addresses: ["10.0.0.3"] }));
    expect(error).toMatchObject({ reason: "AddressInUse", address: "10.0.0.3", usedBy: ["ns/owner"] });
    expect(error.message).toMatch(/already used by Service ns\/owner, which does not allow sharing/);
  });

  it("rejects an address of the wrong family", () => {
    const error = errorOf(new Allocator(pools).assign(service("ns/a"), { addresses: ["fd00::1"] }));
    expect(error).toMatchObject({ reason: "InvalidRequestedAddress", address: "fd00::1" });
    expect(error.message).toMatch(
      /an IPv6 address, but the Service's families are IPv4 \(ipFamilyPolicy SingleStack\)/,
    );
  });

  it("rejects text that is not an address", () => {
    const error = errorOf(
      new Allocator(pools).assign(service("ns/a"), {
        addresses: ["10.0.0.0/24"],
        addressesField: 'metadata.annotations["portico.io/loadBalancerIPs"]',
      }),
    );
    expect(error.reason).toBe("InvalidRequestedAddress");
    expect(refusalText(error)).toMatch(
      /^metadata.annotations\["portico.io\/loadBalancerIPs"\]: "10.0.0.0\/24" is a network/,
    );
  });

  it("rejects a requested address outside the named pool", () => {
    const error = errorOf(
      new Allocator(pools).assign(service("ns/a"), { addresses: ["10.0.0.1"], pool: "buggy" }),
    );
    expect(error.reason).toBe("InvalidRequestedAddress");
    expect(error.message).toMatch(
      /^10.0.0.1 is in IPAddressPool p, but the address-pool annotation names pool buggy/,
    );
  });

  it("rejects a requested address in a pool whose selectors exclude the Service", () => {
    const allocator = new Allocator([
      pool("prod", { addresses: ["10.0.0.0/30"], serviceAllocation: { namespaces: ["prod"] } }),
    ]);
    expect(errorOf(allocator.assign(service("dev/a"), { addresses: ["10.0.0.1"] }))).toMatchObject({
      reason: "PoolDoesNotAllowService",
      pool: "prod",
    });
  });

  it("moves to a newly requested address and frees the old one", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/a")));
    expect(addressesOf(allocator.assign(service("ns/a"), { addresses: ["10.0.0.6"] }))).toEqual(["10.0.0.6"]);
    expect(allocator.servicesUsing("10.0.0.0")).toEqual([]);
    expect(allocator.servicesUsing("10.0.0.6")).toEqual(["ns/a"]);
  });

  it("keeps the old address when a new request fails", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/a")));
    errorOf(allocator.assign(service("ns/a"), { addresses: ["192.168.0.1"] }));
    expect(allocator.addressesOf("ns/a")).toEqual(["10.0.0.0"]);
  });
});

describe("never hands out an address twice", () => {
  it("holds under random churn of assigns, re-assigns, requests and releases", () => {
    const allocator = new Allocator([
      pool("a", { addresses: ["10.0.0.0/28"], serviceAllocation: { priority: 1 } }),
      pool("b", { addresses: ["10.0.1.0/29"], avoidBuggyIPs: true }),
    ]);
    let seed = 12345;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 3000; step++) {
      const key = `ns/s${random(30)}`;
      const action = random(4);
      if (action === 0) allocator.release(key);
      else if (action === 1)
        allocator.assign(service(key, { ports: [tcp(80 + random(3))] }), {
          addresses: [`10.0.0.${random(16)}`],
        });
      else allocator.assign(service(key));
      const seen = new Map<string, string>();
      for (const assignment of allocator.assignments()) {
        for (const address of assignment.addresses) {
          expect(
            seen.get(address),
            `${address} held by ${seen.get(address)} and ${assignment.serviceKey}`,
          ).toBeUndefined();
          seen.set(address, assignment.serviceKey);
        }
      }
    }
  });
});
