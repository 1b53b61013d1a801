import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import type { AllocationError, AssignResult } from "../../shared/allocationTypes.ts";
import { pool, service, type ServiceOptions } from "../../test/unit/support/metal.ts";

function addressesOf(result: AssignResult): string[] {
  if (!result.ok) throw new Error(`assignment failed: ${result.error.message}`);
  return result.addresses.map((a) => a.address);
}

function errorOf(result: AssignResult): AllocationError {
  if (result.ok)
    throw new Error(`expected a failure, got ${result.addresses.map((a) => a.address).join(",")}`);
  return result.error;
}

function dual(
  first: "IPv4" | "IPv6" = "IPv4",
  ipFamilyPolicy: "PreferDualStack" | "RequireDualStack" = "RequireDualStack",
): ServiceOptions {
  return { ipFamilies: first === "IPv4" ? ["IPv4", "IPv6"] : ["IPv6", "IPv4"], ipFamilyPolicy };
}

describe("dual-stack", () => {
  const pools = [pool("both", { addresses: ["10.0.0.0/30", "fd00::/126"] })];

  it("gives one address per family, primary family first", () => {
    const allocator = new Allocator(pools);
    expect(addressesOf(allocator.assign(service("ns/a", dual("IPv4"))))).toEqual(["10.0.0.0", "fd00::"]);
    expect(addressesOf(allocator.assign(service("ns/b", dual("IPv6"))))).toEqual(["fd00::1", "10.0.0.1"]);
  });

  it("takes each family from the most preferred pool that has it", () => {
    const allocator = new Allocator([
      pool("v4", { addresses: ["10.0.0.0/30"], serviceAllocation: { priority: 1 } }),
      pool("v6", { addresses: ["fd00::/126"], serviceAllocation: { priority: 2 } }),
    ]);
    const result = allocator.assign(service("ns/a", dual()));
    expect(result.ok && result.addresses.map((a) => `${a.address}@${a.pool}`)).toEqual([
      "10.0.0.0@v4",
      "fd00::@v6",
    ]);
  });

  it("fails RequireDualStack when a family is missing, changing nothing", () => {
    const allocator = new Allocator([pool("v4", { addresses: ["10.0.0.0/30"] })]);
    const error = errorOf(allocator.assign(service("ns/a", dual())));
    expect(error).toMatchObject({ reason: "FamilyUnavailable", family: "IPv6" });
    expect(error.message).toMatch(
      /no auto-assigning IPAddressPool that serves this Service has IPv6 addresses/,
    );
    expect(allocator.assignments()).toEqual([]);
  });

  it("fails RequireDualStack when one family is exhausted", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.0/30", "fd00::/128"] })]);
    addressesOf(allocator.assign(service("ns/v6", { ipFamilies: ["IPv6"] })));
    expect(errorOf(allocator.assign(service("ns/a", dual())))).toMatchObject({
      reason: "PoolExhausted",
      family: "IPv6",
    });
  });

  it("lets PreferDualStack fall back to the primary family and say what it skipped", () => {
    const allocator = new Allocator([pool("v4", { addresses: ["10.0.0.0/30"] })]);
    const result = allocator.assign(service("ns/a", dual("IPv4", "PreferDualStack")));
    expect(addressesOf(result)).toEqual(["10.0.0.0"]);
    expect(result.ok && result.skipped.map((s) => [s.family, s.error.reason])).toEqual([
      ["IPv6", "FamilyUnavailable"],
    ]);
  });

  it("still fails PreferDualStack when the primary family is unavailable", () => {
    const allocator = new Allocator([pool("v4", { addresses: ["10.0.0.0/30"] })]);
    expect(errorOf(allocator.assign(service("ns/a", dual("IPv6", "PreferDualStack"))))).toMatchObject({
      reason: "FamilyUnavailable",
      family: "IPv6",
    });
  });

  it("gives PreferDualStack the second family later, keeping the first address", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.0/30", "fd00::/128"] })]);
    addressesOf(allocator.assign(service("ns/hog", { ipFamilies: ["IPv6"] })));
    const svc = service("ns/a", dual("IPv4", "PreferDualStack"));
    expect(addressesOf(allocator.assign(svc))).toEqual(["10.0.0.0"]);
    allocator.release("ns/hog");
    expect(addressesOf(allocator.assign(svc))).toEqual(["10.0.0.0", "fd00::"]);
  });

  it("names the pool when a named pool lacks a family", () => {
    const allocator = new Allocator([pool("v4", { addresses: ["10.0.0.0/30"] })]);
    const error = errorOf(allocator.assign(service("ns/a", { ipFamilies: ["IPv6"] }), { pool: "v4" }));
    expect(error.message).toMatch(/^IPAddressPool v4 has no IPv6 addresses/);
  });

  it("honours one requested address per family", () => {
    const allocator = new Allocator(pools);
    expect(
      addressesOf(allocator.assign(service("ns/a", dual("IPv6")), { addresses: ["10.0.0.2", "fd00::3"] })),
    ).toEqual(["fd00::3", "10.0.0.2"]);
  });

  it("rejects two requested addresses of one family", () => {
    const error = errorOf(
      new Allocator(pools).assign(service("ns/a", dual()), { addresses: ["10.0.0.1", "10.0.0.2"] }),
    );
    expect(error.reason).toBe("InvalidRequestedAddress");
    expect(error.message).toMatch(/^two IPv4 addresses \(10.0.0.1, 10.0.0.2\)/);
  });

  it("rejects RequireDualStack with only one requested address", () => {
    const error = errorOf(new Allocator(pools).assign(service("ns/a", dual()), { addresses: ["10.0.0.1"] }));
    expect(error.reason).toBe("InvalidRequestedAddress");
    expect(error.message).toMatch(/^no IPv6 address, but the Service requires dual-stack/);
  });

  it("gives PreferDualStack exactly the requested families", () => {
    expect(
      addressesOf(
        new Allocator(pools).assign(service("ns/a", dual("IPv4", "PreferDualStack")), {
          addresses: ["fd00::2"],
        }),
      ),
    ).toEqual(["fd00::2"]);
  });

  it("drops a family the Service no longer wants", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/a", dual())));
    expect(addressesOf(allocator.assign(service("ns/a")))).toEqual(["10.0.0.0"]);
    expect(allocator.poolCounts("both")).toMatchObject({ assignedIPv6: 0n });
  });
});

describe("huge IPv6 pools", () => {
  it("allocates from a /64 and a whole ::/0 without materializing them", () => {
    const allocator = new Allocator([
      pool("slash64", { addresses: ["2001:db8::/64"], serviceAllocation: { priority: 1 } }),
      pool("everything", { addresses: ["::/0"] }),
    ]);
    const v6 = (key: string) => service(key, { ipFamilies: ["IPv6"] });
    expect(addressesOf(allocator.assign(v6("ns/a")))).toEqual(["2001:db8::"]);
    expect(addressesOf(allocator.assign(v6("ns/b")))).toEqual(["2001:db8::1"]);
    expect(
      addressesOf(allocator.assign(v6("ns/c"), { addresses: ["2001:db8::ffff:ffff:ffff:ffff"] })),
    ).toEqual(["2001:db8::ffff:ffff:ffff:ffff"]);
    expect(addressesOf(allocator.assign(v6("ns/d"), { pool: "everything" }))).toEqual(["::"]);
    expect(allocator.poolCounts("slash64")).toEqual({
      pool: "slash64",
      assignedIPv4: 0n,
      assignedIPv6: 3n,
      availableIPv4: 0n,
      availableIPv6: 2n ** 64n - 3n,
    });
    expect(allocator.poolCounts("everything")?.availableIPv6).toBe(2n ** 128n - 4n);
  });

  it("keeps allocating in order for many Services in a huge pool", () => {
    const allocator = new Allocator([pool("big", { addresses: ["fd00::/48"] })]);
    for (let i = 0; i < 500; i++)
      addressesOf(allocator.assign(service(`ns/s${i}`, { ipFamilies: ["IPv6"] })));
    expect(allocator.addressesOf("ns/s499")).toEqual(["fd00::1f3"]);
    expect(allocator.poolCounts("big")?.assignedIPv6).toBe(500n);
  });
});
