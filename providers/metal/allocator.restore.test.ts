import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import type { AssignResult } from "../../shared/allocationTypes.ts";
import { pool, service, tcp } from "../../test/unit/support/metal.ts";

function addressesOf(result: AssignResult): string[] {
  if (!result.ok) throw new Error(`assignment failed: ${result.error.message}`);
  return result.addresses.map((a) => a.address);
}

const pools = [
  pool("a", { addresses: ["10.0.0.0/29", "fd00::/125"], serviceAllocation: { priority: 1 } }),
  pool("b", { addresses: ["10.0.1.0/30"], autoAssign: false }),
];

function busyAllocator(): Allocator {
  const allocator = new Allocator(pools);
  addressesOf(allocator.assign(service("ns/one")));
  addressesOf(
    allocator.assign(service("ns/two", { ipFamilies: ["IPv6", "IPv4"], ipFamilyPolicy: "RequireDualStack" })),
  );
  addressesOf(allocator.assign(service("ns/three", { ports: [tcp(80)] }), { sharingKey: "web" }));
  addressesOf(allocator.assign(service("ns/four", { ports: [tcp(443)] }), { sharingKey: "web" }));
  addressesOf(allocator.assign(service("ns/five"), { pool: "b" }));
  addressesOf(allocator.assign(service("ns/six")));
  allocator.release("ns/one");
  return allocator;
}

describe("rebuilding after a restart", () => {
  it("recreates identical state from the assignments", () => {
    const before = busyAllocator();
    const after = Allocator.fromAssignments(pools, before.assignments());
    expect(after.assignments()).toEqual(before.assignments());
    expect(after.allPoolCounts()).toEqual(before.allPoolCounts());
    expect(after.restoreProblems).toEqual([]);
    expect(after.assignments().find((a) => a.serviceKey === "ns/two")?.addresses).toEqual([
      "fd00::",
      "10.0.0.1",
    ]);
  });

  it("returns the same addresses when every Service is reconciled again", () => {
    const before = busyAllocator();
    const after = Allocator.fromAssignments(pools, before.assignments());
    expect(addressesOf(after.assign(service("ns/six")))).toEqual(before.addressesOf("ns/six"));
    const again = after.assign(service("ns/four", { ports: [tcp(443)] }), { sharingKey: "web" });
    expect(again.ok && again.changed).toBe(false);
    expect(addressesOf(after.assign(service("ns/five"), { pool: "b" }))).toEqual(
      before.addressesOf("ns/five"),
    );
  });

  it("gives new Services addresses that collide with nothing restored", () => {
    const after = Allocator.fromAssignments(pools, busyAllocator().assignments());
    const taken = new Set(after.assignments().flatMap((a) => a.addresses));
    const fresh = addressesOf(after.assign(service("ns/new")));
    expect(fresh).toEqual(["10.0.0.0"]); // released before the restart, so free again
    expect(taken.has(fresh[0] ?? "")).toBe(false);
    const next = addressesOf(after.assign(service("ns/newer")));
    expect(taken.has(next[0] ?? "")).toBe(false);
  });

  it("keeps the first claimant of a double-booked address and reports the rest", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/old", addresses: ["10.0.0.3"], ports: [tcp(80)] },
      { serviceKey: "ns/new", addresses: ["10.0.0.3", "fd00::1"], ports: [tcp(80)] },
      { serviceKey: "ns/shared-1", addresses: ["10.0.0.4"], sharingKey: "k", ports: [tcp(80)] },
      { serviceKey: "ns/shared-2", addresses: ["10.0.0.4"], sharingKey: "k", ports: [tcp(80)] },
    ]);
    expect(allocator.addressesOf("ns/old")).toEqual(["10.0.0.3"]);
    expect(allocator.addressesOf("ns/new")).toEqual(["fd00::1"]);
    expect(allocator.addressesOf("ns/shared-2")).toEqual([]);
    expect(allocator.restoreProblems.map((p) => [p.serviceKey, p.address, p.error.reason])).toEqual([
      ["ns/new", "10.0.0.3", "AddressInUse"],
      ["ns/shared-2", "10.0.0.4", "PortConflict"],
    ]);
  });

  it("keeps addresses outside every pool (still in use) but reports them, and reassigns on the next assign", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/orphan", addresses: ["192.168.9.9"], ports: [tcp(80)] },
    ]);
    expect(allocator.addressesOf("ns/orphan")).toEqual(["192.168.9.9"]);
    expect(allocator.restoreProblems[0]?.error).toMatchObject({ reason: "AddressNotInAnyPool" });
    // Another Service cannot grab it even if a pool containing it appears.
    const widened = allocator.withPools([...pools, pool("c", { addresses: ["192.168.9.0/24"] })]);
    expect(widened.assign(service("ns/thief"), { addresses: ["192.168.9.9"] })).toMatchObject({
      ok: false,
      error: { reason: "AddressInUse" },
    });
    // Reconciling the orphan moves it into a pool.
    expect(addressesOf(allocator.assign(service("ns/orphan")))).toEqual(["10.0.0.0"]);
  });

  it("reports unparsable and duplicate-family addresses in what was read back", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/odd", addresses: ["garbage", "10.0.0.1", "10.0.0.2"], ports: [] },
    ]);
    expect(allocator.addressesOf("ns/odd")).toEqual(["10.0.0.1"]);
    expect(allocator.restoreProblems.map((p) => p.error.reason)).toEqual([
      "InvalidRequestedAddress",
      "InvalidRequestedAddress",
    ]);
  });

  it("keeps only the first assignment of a Service listed twice", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/twice", addresses: ["10.0.0.1"], sharingKey: "k", ports: [tcp(80)] },
      { serviceKey: "ns/twice", addresses: ["fd00::1"], ports: [tcp(81)] },
    ]);
    expect(allocator.assignments()).toEqual([
      { serviceKey: "ns/twice", addresses: ["10.0.0.1"], sharingKey: "k", ports: [tcp(80)] },
    ]);
    expect(allocator.restoreProblems.map((p) => p.address)).toEqual(["fd00::1"]);
  });

  it("canonicalizes what it reads back", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/v6", addresses: ["FD00:0:0::0003"], ports: [] },
    ]);
    expect(allocator.servicesUsing("fd00::3")).toEqual(["ns/v6"]);
  });

  it("withPools re-evaluates counts under the new pools", () => {
    const allocator = busyAllocator();
    // 10.0.0.1 (ns/two), 10.0.0.2 (shared by ns/three and ns/four) and 10.0.0.3 (ns/six) are inside.
    const shrunk = allocator.withPools([pool("a", { addresses: ["10.0.0.0/30"] })]);
    expect(shrunk.assignments()).toEqual(allocator.assignments());
    expect(shrunk.allPoolCounts()).toEqual([
      { pool: "a", assignedIPv4: 3n, assignedIPv6: 0n, availableIPv4: 1n, availableIPv6: 0n },
    ]);
  });
});
