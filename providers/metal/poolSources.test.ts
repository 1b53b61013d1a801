import { describe, expect, test } from "vitest";
import { intent } from "../../test/unit/support/awsIntent.ts";
import { ConfigurationError } from "../errors.ts";
import { duplicateConcerning, splitDuplicates, withoutAnnouncement, type PoolObject } from "./poolSources.ts";
import { MetalProvider } from "./provider.ts";

const portico = (name: string, addresses: string[], extra: object = {}): PoolObject => ({
  name,
  spec: { addresses, ...extra },
});
const metallb = (name: string, addresses: string[], extra: object = {}): PoolObject => ({
  name,
  spec: { addresses, ...extra },
  group: "metallb.io",
  namespace: "metallb-system",
});
const identity = { namespace: "shop", namespaceLabels: {}, labels: {} };

describe("pools of both kinds as one set", () => {
  test("distinct names are all used; a name in both kinds is left out, with a message naming both", () => {
    const { unique, duplicates } = splitDuplicates([
      portico("lan", ["192.0.2.0/28"]),
      metallb("dmz", ["198.51.100.0/28"]),
      portico("web", ["192.0.2.16/28"]),
      metallb("web", ["198.51.100.16/28"]),
    ]);
    expect(unique.map((p) => p.name)).toEqual(["lan", "dmz"]);
    expect(duplicates.map((d) => d.name)).toEqual(["web"]);
    expect(duplicates[0]!.message).toBe(
      'IPAddressPool name "web" is defined twice, as IPAddressPool web (portico.io) and ' +
        "IPAddressPool metallb-system/web (metallb.io); Portico does not choose between them and uses neither: " +
        "rename or delete one of them",
    );
    expect(duplicates[0]!.definitions.map((p) => p.ranges.length)).toEqual([1, 1]);
  });

  test("announcement settings are not the allocator's: nodeSelectors are dropped before parsing", () => {
    expect(withoutAnnouncement({ addresses: ["192.0.2.0/30"], nodeSelectors: [{}] })).toEqual({
      addresses: ["192.0.2.0/30"],
    });
  });

  const [web] = splitDuplicates([
    portico("web", ["192.0.2.16/28"], { autoAssign: false }),
    metallb("web", ["198.51.100.16/28"], { serviceAllocation: { namespaces: ["shop"] } }),
  ]).duplicates;

  test("a Service depends on the ambiguous name when it names it, holds or asks for an address in either, or either could serve it", () => {
    const concerns = (facts: Partial<Parameters<typeof duplicateConcerning>[1]>) =>
      duplicateConcerning([web!], { identity, addresses: [], unservedFamilies: [], ...facts })?.name;
    expect(concerns({ pool: "web" })).toBe("web");
    expect(concerns({ addresses: ["192.0.2.20"] })).toBe("web");
    expect(concerns({ addresses: ["198.51.100.20"] })).toBe("web");
    expect(concerns({ unservedFamilies: ["IPv4"] })).toBe("web");
    // Not: another pool named, an address elsewhere, nothing more to allocate, another namespace, another family.
    expect(concerns({ pool: "lan", unservedFamilies: ["IPv4"] })).toBeUndefined();
    expect(concerns({ addresses: ["203.0.113.5"] })).toBeUndefined();
    expect(concerns({})).toBeUndefined();
    expect(
      concerns({ identity: { ...identity, namespace: "other" }, unservedFamilies: ["IPv4"] }),
    ).toBeUndefined();
    expect(concerns({ unservedFamilies: ["IPv6"] })).toBeUndefined();
  });
});

describe("the provider with a name defined by both kinds", () => {
  const inventory = (pools: PoolObject[]) => ({
    pools: () => pools,
    assignments: () => [],
    nodeAddresses: () => [],
  });

  test("refuses a Service that depends on it, serves the others, and reports both definitions as unusable", async () => {
    const provider = new MetalProvider(
      inventory([
        portico("web", ["192.0.2.16/30"]),
        metallb("web", ["198.51.100.16/30"]),
        metallb("other", ["203.0.113.0/30"], { autoAssign: false }),
      ]),
    );
    // ensure throws at once, as for every allocation failure; the reconciler catches either way.
    const attempt = (i: ReturnType<typeof intent>) => Promise.resolve().then(() => provider.ensure(i));
    const named = attempt(intent({ annotations: { "metallb.io/address-pool": "web" } }));
    await expect(named).rejects.toBeInstanceOf(ConfigurationError);
    await expect(named).rejects.toMatchObject({ reason: "DuplicatePoolName" });
    await expect(named).rejects.toThrow(
      /^metadata\.annotations\["metallb\.io\/address-pool"\]: IPAddressPool name "web"/,
    );
    // Auto-assignment: either definition could have served it.
    await expect(attempt(intent())).rejects.toMatchObject({ reason: "DuplicatePoolName" });
    const fine = await provider.ensure(
      intent({
        service: { namespace: "shop", name: "db", uid: "u2" },
        annotations: { "metallb.io/address-pool": "other" },
      }),
    );
    expect(fine.ingress).toEqual([{ ip: "203.0.113.0", ipMode: "VIP" }]);
    const state = provider.poolState();
    expect(state.invalid.map((i) => [i.pool, i.group, i.problems[0]!.field])).toEqual([
      ["web", "portico.io", "metadata.name"],
      ["web", "metallb.io", "metadata.name"],
    ]);
    expect(state.counts.map((c) => [c.pool, c.assignedIPv4, c.availableIPv4])).toEqual([["other", 1n, 3n]]);
  });

  test("MetalLB's pools allocate like Portico's, by the name Services use", async () => {
    const provider = new MetalProvider(
      inventory([metallb("lan", ["198.51.100.0/30"], { avoidBuggyIPs: true })]),
    );
    const result = await provider.ensure(intent({ annotations: { "metallb.io/address-pool": "lan" } }));
    expect(result.ingress).toEqual([{ ip: "198.51.100.1", ipMode: "VIP" }]);
    expect(result.changes).toEqual(["assigned 198.51.100.1 from pool lan"]);
  });
});
