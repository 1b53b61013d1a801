import { describe, expect, test } from "vitest";
import {
  adsForService,
  interfacesFor,
  nodeMayAnnounceFor,
  poolAnnouncement,
  readAdvertisements,
  type L2Advertisement,
} from "./advertisements.ts";
import { selectsPool } from "../pools.ts";

const ad = (spec: unknown, name = "ad", namespace = "metallb-system") => ({
  metadata: { name, namespace },
  spec,
});

function metallb(spec: unknown, name = "ad"): L2Advertisement {
  const { ads, problems } = readAdvertisements([ad(spec, name)], "metallb.io");
  expect(problems).toEqual([]);
  return ads[0]!;
}

function portico(spec: unknown, name = "ad"): L2Advertisement {
  return readAdvertisements([{ metadata: { name }, spec }], "portico.io").ads[0]!;
}

const pool = (name: string, group: "portico.io" | "metallb.io", labels = {}, nodeSelectors = []) => ({
  name,
  group,
  labels,
  nodeSelectors,
});

describe("reading L2Advertisements", () => {
  test("every field MetalLB defines, keyed as users name them", () => {
    const read = metallb({
      ipAddressPools: ["lan"],
      ipAddressPoolSelectors: [{ matchLabels: { tier: "edge" } }],
      nodeSelectors: [{ matchLabels: { edge: "true" } }],
      interfaces: ["eth1"],
      serviceSelectors: [{ matchExpressions: [{ key: "app", operator: "Exists" }] }],
    });
    expect(read).toEqual({
      key: "metallb-system/ad",
      group: "metallb.io",
      ipAddressPools: ["lan"],
      ipAddressPoolSelectors: [{ matchLabels: { tier: "edge" } }],
      nodeSelectors: [{ matchLabels: { edge: "true" } }],
      interfaces: ["eth1"],
      serviceSelectors: [{ matchExpressions: [{ key: "app", operator: "Exists" }] }],
    });
    expect(portico({}).key).toBe("ad");
  });

  test("what cannot be read selects nothing and is said; a field Portico lacks is said, never ignored silently", () => {
    const { ads, problems } = readAdvertisements(
      [
        ad({
          nodeSelectors: [{ matchExpressions: [{ key: "edge", operator: "Near" }] }],
          interfaces: ["eth0", 7],
          preferredNodeSelectors: [{ weight: 1, preference: {} }],
        }),
      ],
      "metallb.io",
    );
    expect(ads[0]).toMatchObject({ nodeSelectors: [null], interfaces: ["eth0"] });
    expect(problems).toEqual([
      "L2Advertisement metallb-system/ad (metallb.io): spec.preferredNodeSelectors is not implemented by Portico and has no effect",
      expect.stringMatching(
        /spec\.nodeSelectors\[0\]\.matchExpressions\[0\]\.operator must be one of .*selects nothing$/,
      ),
      "L2Advertisement metallb-system/ad (metallb.io): spec.interfaces[1] ignored: not a name",
    ]);
    // An unreadable node selector selects no node rather than every node.
    const rule = poolAnnouncement(pool("lan", "metallb.io"), ads);
    expect(nodeMayAnnounceFor(rule, adsForService(rule, {}), { edge: "true" })).toBe(false);
  });
});

describe("which pools an advertisement selects", () => {
  test("naming no pool and selecting none: every pool of its own group, never the other group's", () => {
    const blanket = metallb({});
    expect(selectsPool(blanket, pool("lan", "metallb.io"))).toBe(true);
    expect(selectsPool(blanket, pool("lan", "portico.io"))).toBe(false);
    expect(selectsPool(portico({}), pool("lan", "portico.io"))).toBe(true);
    expect(selectsPool(portico({}), pool("lan", "metallb.io"))).toBe(false);
  });

  test("by name or by label selector (either is enough)", () => {
    const both = metallb({
      ipAddressPools: ["a"],
      ipAddressPoolSelectors: [{ matchLabels: { tier: "edge" } }],
    });
    expect(selectsPool(both, pool("a", "metallb.io"))).toBe(true);
    expect(selectsPool(both, pool("b", "metallb.io", { tier: "edge" }))).toBe(true);
    expect(selectsPool(both, pool("c", "metallb.io", { tier: "core" }))).toBe(false);
  });
});

describe("a pool's announcement", () => {
  test("a MetalLB pool no advertisement selects is announced by no node", () => {
    const rule = poolAnnouncement(pool("lan", "metallb.io"), [metallb({ ipAddressPools: ["other"] })]);
    expect(rule.ads).toEqual([]);
    expect(nodeMayAnnounceFor(rule, adsForService(rule, {}), {})).toBe(false);
  });

  test("a Portico pool no Portico advertisement selects is announced as before: its own nodeSelectors, every interface", () => {
    const own = pool("lan", "portico.io", {}, [{ matchLabels: { edge: "true" } }] as never);
    const rule = poolAnnouncement(own, [metallb({})]);
    expect(rule.ads).toBeUndefined();
    const ads = adsForService(rule, {});
    expect(nodeMayAnnounceFor(rule, ads, { edge: "true" })).toBe(true);
    expect(nodeMayAnnounceFor(rule, ads, {})).toBe(false);
    expect(interfacesFor(ads, { edge: "true" })).toBeUndefined();
  });

  test("with advertisements, a node matching any of them may announce (ORed); the pool's own selectors still hold", () => {
    const own = pool("lan", "portico.io", {}, [
      { matchExpressions: [{ key: "drain", operator: "DoesNotExist" }] },
    ] as never);
    const rule = poolAnnouncement(own, [
      portico({ nodeSelectors: [{ matchLabels: { zone: "a" } }] }, "a"),
      portico({ nodeSelectors: [{ matchLabels: { zone: "b" } }] }, "b"),
    ]);
    const ads = adsForService(rule, {});
    expect(nodeMayAnnounceFor(rule, ads, { zone: "a" })).toBe(true);
    expect(nodeMayAnnounceFor(rule, ads, { zone: "b" })).toBe(true);
    expect(nodeMayAnnounceFor(rule, ads, { zone: "c" })).toBe(false);
    expect(nodeMayAnnounceFor(rule, ads, { zone: "a", drain: "" })).toBe(false);
  });

  test("serviceSelectors: only the advertisements matching the Service apply to it", () => {
    const rule = poolAnnouncement(pool("lan", "metallb.io"), [
      metallb(
        {
          serviceSelectors: [{ matchLabels: { app: "web" } }],
          nodeSelectors: [{ matchLabels: { zone: "a" } }],
        },
        "web",
      ),
      metallb({ nodeSelectors: [{ matchLabels: { zone: "b" } }] }, "all"),
    ]);
    expect(adsForService(rule, { app: "web" })?.map((a) => a.key)).toEqual([
      "metallb-system/web",
      "metallb-system/all",
    ]);
    expect(adsForService(rule, { app: "db" })?.map((a) => a.key)).toEqual(["metallb-system/all"]);
    expect(nodeMayAnnounceFor(rule, adsForService(rule, { app: "db" }), { zone: "a" })).toBe(false);
    expect(nodeMayAnnounceFor(rule, adsForService(rule, { app: "web" }), { zone: "a" })).toBe(true);
  });

  test("interfaces: the union over the advertisements matching the node; one naming none means every interface", () => {
    const ads = [
      metallb({ nodeSelectors: [{ matchLabels: { zone: "a" } }], interfaces: ["eth1"] }, "a"),
      metallb({ interfaces: ["eth2", "eth1"] }, "any"),
      metallb({ nodeSelectors: [{ matchLabels: { zone: "c" } }] }, "c"),
    ];
    expect(interfacesFor(ads, { zone: "a" })).toEqual(["eth1", "eth2"]);
    expect(interfacesFor(ads, { zone: "b" })).toEqual(["eth1", "eth2"]);
    expect(interfacesFor(ads, { zone: "c" })).toBeUndefined();
    expect(interfacesFor(undefined, {})).toBeUndefined();
  });
});
