import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import { sharingBackend, type AllocationError, type AssignResult } from "../../shared/allocationTypes.ts";
import { pool, service, tcp, udp } from "../../test/unit/support/metal.ts";

function addressesOf(result: AssignResult): string[] {
  if (!result.ok) throw new Error(`assignment failed: ${result.error.message}`);
  return result.addresses.map((a) => a.address);
}

function errorOf(result: AssignResult): AllocationError {
  if (result.ok)
    throw new Error(`expected a failure, got ${result.addresses.map((a) => a.address).join(",")}`);
  return result.error;
}

const pools = [pool("p", { addresses: ["10.0.0.0/29"] })];

describe("sharing an address", () => {
  it("lets Services with the same key and distinct ports share a requested address", () => {
    const allocator = new Allocator(pools);
    const dns = { addresses: ["10.0.0.5"], sharingKey: "dns" };
    expect(addressesOf(allocator.assign(service("ns/dns-tcp", { ports: [tcp(53)] }), dns))).toEqual([
      "10.0.0.5",
    ]);
    expect(addressesOf(allocator.assign(service("ns/dns-udp", { ports: [udp(53)] }), dns))).toEqual([
      "10.0.0.5",
    ]);
    expect(allocator.servicesUsing("10.0.0.5")).toEqual(["ns/dns-tcp", "ns/dns-udp"]);
    // A shared address counts once in the pool status.
    expect(allocator.poolCounts("p")).toMatchObject({ assignedIPv4: 1n, availableIPv4: 7n });
  });

  it("puts Services with the same key on one address without a requested address", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/other")));
    const web = addressesOf(
      allocator.assign(service("ns/http", { ports: [tcp(80)] }), { sharingKey: "web" }),
    );
    const tls = addressesOf(
      allocator.assign(service("ns/https", { ports: [tcp(443)] }), { sharingKey: "web" }),
    );
    expect(web).toEqual(["10.0.0.1"]);
    expect(tls).toEqual(web);
  });

  it("takes a fresh address when the shared one's ports clash", () => {
    const allocator = new Allocator(pools);
    const first = addressesOf(allocator.assign(service("ns/a", { ports: [tcp(80)] }), { sharingKey: "web" }));
    const second = addressesOf(
      allocator.assign(service("ns/b", { ports: [tcp(80)] }), { sharingKey: "web" }),
    );
    expect(second).not.toEqual(first);
  });

  it("rejects a different sharing key", () => {
    const allocator = new Allocator(pools);
    addressesOf(
      allocator.assign(service("ns/a", { ports: [tcp(80)] }), { addresses: ["10.0.0.5"], sharingKey: "one" }),
    );
    const error = errorOf(
      allocator.assign(service("ns/b", { ports: [tcp(443)] }), {
        addresses: ["10.0.0.5"],
        sharingKey: "two",
      }),
    );
    expect(error).toMatchObject({
      reason: "SharingKeyMismatch",
      address: "10.0.0.5",
      usedBy: ["ns/a"],
      theirSharingKey: "one",
    });
    expect(error.message).toBe(
      '10.0.0.5 is shared under key "one" by Service ns/a, but this Service\'s sharing key is "two"; ' +
        "use the same allow-shared-ip value or another address",
    );
  });

  it("rejects a clashing port (same protocol and number), naming the Service", () => {
    const allocator = new Allocator(pools);
    const request = { addresses: ["10.0.0.5"], sharingKey: "k" };
    addressesOf(allocator.assign(service("ns/a", { ports: [tcp(80), tcp(443)] }), request));
    const error = errorOf(allocator.assign(service("ns/b", { ports: [udp(443), tcp(443)] }), request));
    expect(error).toMatchObject({
      reason: "PortConflict",
      port: { protocol: "TCP", port: 443 },
      usedBy: "ns/a",
    });
    expect(error.message).toMatch(/^10.0.0.5 already serves TCP\/443 for Service ns\/a/);
  });

  it("requires a key on both sides", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/keyed"), { addresses: ["10.0.0.5"], sharingKey: "k" }));
    const unkeyed = errorOf(
      allocator.assign(service("ns/plain", { ports: [tcp(81)] }), { addresses: ["10.0.0.5"] }),
    );
    expect(unkeyed.reason).toBe("AddressInUse");
    expect(unkeyed.message).toMatch(
      /set the annotation portico.io\/allow-shared-ip \(or metallb.io\/allow-shared-ip\) to "k"/,
    );

    addressesOf(allocator.assign(service("ns/solo"), { addresses: ["10.0.0.6"] }));
    const keyed = errorOf(
      allocator.assign(service("ns/joiner", { ports: [tcp(81)] }), {
        addresses: ["10.0.0.6"],
        sharingKey: "k",
      }),
    );
    expect(keyed).toMatchObject({ reason: "AddressInUse", usedBy: ["ns/solo"] });
  });

  it("treats an empty sharing key as none", () => {
    const allocator = new Allocator(pools);
    addressesOf(allocator.assign(service("ns/a"), { addresses: ["10.0.0.5"], sharingKey: " " }));
    expect(allocator.assignments()[0]).not.toHaveProperty("sharingKey");
  });

  it("moves a Service whose new ports clash with a co-tenant", () => {
    const allocator = new Allocator(pools);
    const request = { sharingKey: "k" };
    const shared = addressesOf(allocator.assign(service("ns/a", { ports: [tcp(80)] }), request));
    expect(addressesOf(allocator.assign(service("ns/b", { ports: [tcp(443)] }), request))).toEqual(shared);
    const moved = addressesOf(allocator.assign(service("ns/b", { ports: [tcp(80)] }), request));
    expect(moved).not.toEqual(shared);
    expect(allocator.servicesUsing(shared[0] ?? "")).toEqual(["ns/a"]);
  });

  it("lets the only holder change its key in place, and frees the address when all sharers leave", () => {
    const allocator = new Allocator(pools);
    const a = addressesOf(allocator.assign(service("ns/a"), { sharingKey: "old" }));
    const result = allocator.assign(service("ns/a"), { sharingKey: "new" });
    expect(addressesOf(result)).toEqual(a);
    expect(result.ok && result.changed).toBe(true);
    addressesOf(allocator.assign(service("ns/b", { ports: [tcp(81)] }), { sharingKey: "new" }));
    allocator.release("ns/a");
    expect(allocator.servicesUsing(a[0] ?? "")).toEqual(["ns/b"]);
    allocator.release("ns/b");
    expect(allocator.poolCounts("p")).toMatchObject({ assignedIPv4: 0n });
  });

  it("prefers the shared address in the most preferred pool", () => {
    const allocator = new Allocator([
      pool("low", { addresses: ["10.0.2.0/30"], serviceAllocation: { priority: 9 } }),
      pool("high", { addresses: ["10.0.1.0/30"], serviceAllocation: { priority: 1 } }),
    ]);
    addressesOf(
      allocator.assign(service("ns/a", { ports: [tcp(1)] }), { addresses: ["10.0.2.1"], sharingKey: "k" }),
    );
    addressesOf(
      allocator.assign(service("ns/b", { ports: [tcp(2)] }), { addresses: ["10.0.1.2"], sharingKey: "k" }),
    );
    expect(addressesOf(allocator.assign(service("ns/c", { ports: [tcp(3)] }), { sharingKey: "k" }))).toEqual([
      "10.0.1.2",
    ]);
  });
});

// MetalLB's rule: one node announces a shared address, so with Local only that node's endpoints answer, and
// Services on one address must both be Cluster, or both Local with the same pods.
describe("sharing an address: which pods answer", () => {
  const web = sharingBackend("Local", { app: "web", tier: "front" });
  const sameWeb = sharingBackend("Local", { tier: "front", app: "web" });
  const api = sharingBackend("Local", { app: "api" });
  const cluster = sharingBackend("Cluster", { app: "web" });

  it("names the selector canonically, and Cluster needs none", () => {
    expect(web).toBe(sameWeb);
    expect(cluster).toBe("");
    expect(sharingBackend("Cluster", { app: "api" })).toBe(cluster);
  });

  it("lets two Local Services with the same selector share, and two Cluster ones with any", () => {
    for (const [a, b] of [
      [web, sameWeb],
      [cluster, sharingBackend("Cluster", { app: "other" })],
    ] as const) {
      const allocator = new Allocator(pools);
      const ask = { addresses: ["10.0.0.5"], sharingKey: "k" };
      addressesOf(allocator.assign(service("ns/a", { ports: [tcp(80)], backend: a }), ask));
      expect(addressesOf(allocator.assign(service("ns/b", { ports: [tcp(443)], backend: b }), ask))).toEqual([
        "10.0.0.5",
      ]);
    }
  });

  it("refuses Local with other pods, or Local beside Cluster, on a requested address, naming the other Service", () => {
    for (const other of [api, cluster]) {
      const allocator = new Allocator(pools);
      const ask = { addresses: ["10.0.0.5"], sharingKey: "k" };
      addressesOf(allocator.assign(service("ns/a", { ports: [tcp(80)], backend: web }), ask));
      const err = errorOf(allocator.assign(service("ns/b", { ports: [tcp(443)], backend: other }), ask));
      expect(err).toMatchObject({ reason: "BackendMismatch", usedBy: "ns/a", address: "10.0.0.5" });
      expect(err.message).toMatch(/both use Cluster, or both use Local with the same spec\.selector/);
    }
  });

  it("gives a Service with the same key but other pods a fresh address rather than the shared one", () => {
    const allocator = new Allocator(pools);
    const first = addressesOf(
      allocator.assign(service("ns/a", { ports: [tcp(80)], backend: web }), { sharingKey: "k" }),
    );
    const second = addressesOf(
      allocator.assign(service("ns/b", { ports: [tcp(443)], backend: api }), { sharingKey: "k" }),
    );
    expect(second).not.toEqual(first);
  });

  it("keeps a pair made before the rule through a restart: its next assignment says why instead", () => {
    const restored = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/a", addresses: ["10.0.0.5"], sharingKey: "k", ports: [tcp(80)], backend: web },
      { serviceKey: "ns/b", addresses: ["10.0.0.5"], sharingKey: "k", ports: [tcp(443)], backend: api },
    ]);
    expect(restored.restoreProblems).toEqual([]);
    expect(restored.servicesUsing("10.0.0.5")).toEqual(["ns/a", "ns/b"]);
    const again = restored.assign(service("ns/b", { ports: [tcp(443)], backend: api }), {
      addresses: ["10.0.0.5"],
      sharingKey: "k",
    });
    expect(errorOf(again).reason).toBe("BackendMismatch");
    // A failed assignment changes nothing: the address stays the Service's.
    expect(restored.addressesOf("ns/b")).toEqual(["10.0.0.5"]);
  });
});
