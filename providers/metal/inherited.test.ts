import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import type { Assignment } from "../../shared/allocationTypes.ts";
import { inherit } from "./inherited.ts";
import { MetalProvider } from "./provider.ts";
import { intent } from "../../test/unit/support/awsIntent.ts";
import { pool, service, tcp } from "../../test/unit/support/metal.ts";

const pools = [
  pool("lan", { addresses: ["192.168.10.0/29"] }),
  pool("web-only", { addresses: ["192.168.20.0/30"], serviceAllocation: { namespaces: ["web"] } }),
];

describe("taking on the address a Service already has", () => {
  it("keeps an address inside a pool and free, and counts it at once", () => {
    const allocator = new Allocator(pools);
    const taken = inherit(allocator, service("ns/moved"), {}, ["192.168.10.5"]);
    expect(taken).toEqual({ kind: "kept", addresses: ["192.168.10.5"] });
    expect(allocator.addressesOf("ns/moved")).toEqual(["192.168.10.5"]);
    expect(allocator.poolCounts("lan")?.assignedIPv4).toBe(1n);
    // A newcomer never gets it, and taking it on again changes nothing.
    const next = allocator.assign(service("ns/new"));
    expect(next.ok && next.addresses[0]!.address).toBe("192.168.10.0");
    expect(inherit(allocator, service("ns/moved"), {}, ["192.168.10.5"])).toEqual({ kind: "none" });
  });

  it("refuses an address in no pool, naming the field, and holds nothing", () => {
    const allocator = new Allocator(pools);
    const taken = inherit(allocator, service("ns/moved"), {}, ["10.9.9.9"]);
    expect(taken.kind).toBe("refused");
    if (taken.kind !== "refused") return;
    expect(taken.error.reason).toBe("StatusAddressNotInPool");
    expect(taken.error.field).toBe("status.loadBalancer.ingress");
    expect(taken.error.message).toContain("10.9.9.9");
    expect(taken.error.message).toContain("add it to an IPAddressPool");
    expect(allocator.addressesOf("ns/moved")).toEqual([]);
    expect(allocator.poolCounts("lan")?.assignedIPv4).toBe(0n);
  });

  it("refuses an address another Service holds, naming it", () => {
    const allocator = new Allocator(pools);
    inherit(allocator, service("ns/first", { ports: [tcp(80)] }), {}, ["192.168.10.5"]);
    const taken = inherit(allocator, service("ns/second", { ports: [tcp(443)] }), {}, ["192.168.10.5"]);
    expect(taken.kind === "refused" && taken.error.reason).toBe("StatusAddressTaken");
    expect(taken.kind === "refused" && taken.error.message).toContain("held by Service ns/first");
    expect(allocator.servicesUsing("192.168.10.5")).toEqual(["ns/first"]);
  });

  it("shares an address when both Services carry the same sharing key and their ports differ", () => {
    const allocator = new Allocator(pools);
    const key = { sharingKey: "k" };
    inherit(allocator, service("ns/a", { ports: [tcp(80)] }), key, ["192.168.10.5"]);
    expect(inherit(allocator, service("ns/b", { ports: [tcp(443)] }), key, ["192.168.10.5"]).kind).toBe(
      "kept",
    );
  });

  it("refuses an address of a pool that does not serve the Service, rather than renumber it", () => {
    const allocator = new Allocator(pools);
    const taken = inherit(allocator, service("ns/moved"), {}, ["192.168.20.1"]);
    expect(taken.kind === "refused" && taken.error.reason).toBe("StatusAddressNotAllowed");
    expect(allocator.addressesOf("ns/moved")).toEqual([]);
    expect(inherit(allocator, service("web/moved"), {}, ["192.168.20.1"]).kind).toBe("kept");
  });

  it("lets an explicit request win: that is how a user asks for another address", () => {
    const allocator = new Allocator(pools);
    const taken = inherit(allocator, service("ns/moved"), { addresses: ["192.168.10.6"] }, ["10.9.9.9"]);
    expect(taken).toEqual({ kind: "none" });
  });

  it("leaves a Service whose status is what the allocator holds already (a restart)", () => {
    const restored = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/own", addresses: ["10.9.9.9"], ports: [tcp(80)] },
    ]);
    expect(inherit(restored, service("ns/own"), {}, ["10.9.9.9"])).toEqual({ kind: "none" });
  });
});

describe("restoring inherited assignments", () => {
  it("keeps the controller's own addresses outside every pool, but not inherited ones", () => {
    const allocator = Allocator.fromAssignments(pools, [
      { serviceKey: "ns/own", addresses: ["10.9.9.9"], ports: [tcp(80)] },
      { serviceKey: "ns/metallb", addresses: ["10.9.9.8"], ports: [tcp(80)], inherited: true },
      { serviceKey: "ns/metallb2", addresses: ["192.168.10.3"], ports: [tcp(80)], inherited: true },
    ]);
    expect(allocator.addressesOf("ns/own")).toEqual(["10.9.9.9"]);
    expect(allocator.addressesOf("ns/metallb")).toEqual([]);
    expect(allocator.addressesOf("ns/metallb2")).toEqual(["192.168.10.3"]);
    expect(allocator.restoreProblems.map((p) => p.address)).toEqual(["10.9.9.9", "10.9.9.8"]);
  });
});

describe("the provider with the Services' status", () => {
  const web = { namespace: "shop", name: "web", uid: "u1" };
  function world(status: Record<string, string[]>, assignments: Assignment[] = []) {
    const provider = new MetalProvider({
      pools: () => [{ name: "lan", spec: { addresses: ["192.168.10.0/29"] } }],
      assignments: () => assignments,
      nodeAddresses: () => [],
      statusAddresses: (namespace, name) => status[`${namespace}/${name}`] ?? [],
    });
    return provider;
  }
  const lb = (over = {}) => intent({ service: web, loadBalancerClass: "portico.io/metal", ...over });

  it("keeps MetalLB's address and says so once, in the plan and in the changes", async () => {
    const status = { "shop/web": ["192.168.10.5"] };
    const provider = world(status, [
      { serviceKey: "shop/web", addresses: ["192.168.10.5"], ports: [tcp(80)], inherited: true },
    ]);
    expect(provider.poolState().counts[0]).toMatchObject({ pool: "lan", assignedIPv4: 1n });
    expect((await provider.plan(lb())).operations).toEqual([
      "keep 192.168.10.5 (in pool lan): the address the Service already has (MetalLB's or set by hand)",
    ]);
    const first = await provider.ensure(lb());
    expect(first.ingress).toEqual([{ ip: "192.168.10.5", ipMode: "VIP" }]);
    expect(first.changes).toEqual([
      "kept 192.168.10.5 (in pool lan), the address the Service had before Portico",
    ]);
    expect((await provider.ensure(lb())).changes).toEqual([]);
    expect((await provider.plan(lb())).operations).toEqual([]);
  });

  it("takes on an address found only when the Service is first served, and refuses one in no pool", async () => {
    const provider = world({ "shop/web": ["192.168.10.6"], "shop/odd": ["10.1.1.1"] });
    expect((await provider.ensure(lb())).ingress).toEqual([{ ip: "192.168.10.6", ipMode: "VIP" }]);
    const odd = lb({ service: { namespace: "shop", name: "odd", uid: "u2" } });
    expect((await provider.plan(odd)).operations[0]).toMatch(
      /^cannot keep: status\.loadBalancer\.ingress: 10\.1\.1\.1/,
    );
    await expect(Promise.resolve().then(() => provider.ensure(odd))).rejects.toMatchObject({
      reason: "StatusAddressNotInPool",
    });
  });
});
