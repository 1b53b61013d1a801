import { describe, expect, test } from "vitest";
import type { AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";
import { servingModes, shareServices } from "./arbiter.ts";

function pool(key: string, group: AnnouncePool["group"] = "portico.io"): AnnouncePool {
  return {
    name: key.split("/").pop()!,
    key,
    group,
    labels: {},
    ranges: [],
    priority: undefined,
    namespaces: [],
    selectsNamespaces: false,
    serviceSelectors: [],
    nodeSelectors: [],
  };
}

function service(key: string, addressPools: Record<string, string | undefined>): AnnouncedService {
  const pools = new Map<string, string>();
  for (const [address, p] of Object.entries(addressPools)) if (p !== undefined) pools.set(address, p);
  return {
    key,
    addresses: Object.keys(addressPools),
    local: false,
    endpointNodes: new Set(["node-a"]),
    hasReadyEndpoint: true,
    pools,
    labels: {},
  };
}

const POOLS = [
  pool("l2-pool"),
  pool("bgp-pool"),
  pool("both"),
  pool("neither"),
  pool("metallb/mlb", "metallb.io"),
];

describe("servingModes", () => {
  test("a pool only an L2Advertisement selects is announced in L2 alone", () => {
    expect(servingModes("l2-pool", { l2: new Set(["l2-pool"]), bgp: new Set() })).toEqual(["l2"]);
  });

  test("a pool only a BGPAdvertisement selects is BGP-only", () => {
    expect(servingModes("bgp-pool", { l2: new Set(), bgp: new Set(["bgp-pool"]) })).toEqual(["bgp"]);
  });

  test("a pool both select is announced both ways", () => {
    expect(servingModes("both", { l2: new Set(["both"]), bgp: new Set(["both"]) })).toEqual(["l2", "bgp"]);
  });

  test("a pool nobody selects stays with L2, the default", () => {
    expect(servingModes("neither", { l2: new Set(), bgp: new Set() })).toEqual(["l2"]);
    expect(servingModes("neither", { l2: new Set() })).toEqual(["l2"]);
  });
});

describe("shareServices", () => {
  const claims = { l2: new Set(["l2-pool", "both"]), bgp: new Set(["bgp-pool", "both", "metallb/mlb"]) };

  test("without the BGP mode L2 is given every Service as it is", () => {
    const services = [
      service("ns/a", { "192.0.2.1": "bgp-pool" }),
      service("ns/b", { "192.0.2.2": undefined }),
    ];
    const shares = shareServices(services, POOLS, { l2: new Set() });
    expect(shares.l2).toEqual(services);
    expect(shares.l2[0]).toBe(services[0]);
    expect(shares.bgp).toBe(services);
  });

  test("with no BGP-only pool L2 is given every Service unchanged", () => {
    const services = [service("ns/a", { "192.0.2.1": "both" })];
    const shares = shareServices(services, POOLS, { l2: new Set(["both"]), bgp: new Set(["both"]) });
    expect(shares.l2).toEqual(services);
    expect(shares.l2[0]).toBe(services[0]);
  });

  test("L2 loses the addresses of BGP-only pools, and Services left with none", () => {
    const services = [
      service("ns/bgp", { "192.0.2.1": "bgp-pool" }),
      service("ns/mixed", { "192.0.2.2": "bgp-pool", "192.0.2.3": "l2-pool", "192.0.2.4": "both" }),
      service("ns/l2", { "192.0.2.5": "l2-pool" }),
      service("ns/metallb", { "192.0.2.6": "metallb/mlb" }),
      service("ns/default", { "192.0.2.7": "neither" }),
    ];
    const shares = shareServices(services, POOLS, claims);
    expect(shares.l2.map((s) => [s.key, s.addresses])).toEqual([
      ["ns/mixed", ["192.0.2.3", "192.0.2.4"]],
      ["ns/l2", ["192.0.2.5"]],
      ["ns/default", ["192.0.2.7"]],
    ]);
    expect(shares.l2[1]).toBe(services[2]);
    expect(shares.l2[0]!.pools).toBe(services[1]!.pools);
    expect(shares.bgp).toBe(services);
  });

  test("addresses in no pool, and pools not among those read, stay with L2", () => {
    const services = [
      service("ns/a", { "192.0.2.1": undefined, "192.0.2.2": "gone", "192.0.2.3": "bgp-pool" }),
    ];
    const shares = shareServices(services, POOLS, { l2: new Set(), bgp: new Set(["bgp-pool", "gone"]) });
    expect(shares.l2.map((s) => s.addresses)).toEqual([["192.0.2.1", "192.0.2.2"]]);
  });
});
