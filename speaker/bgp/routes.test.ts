import { describe, expect, test } from "vitest";
import { readPools } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";
import { readBgpAdvertisements } from "./advertisements.ts";
import { readPeers } from "./peers.ts";
import { bgpRoutes, bgpSelectedPools, maskedPrefix, type RouteInput } from "./routes.ts";

const pools = readPools(
  [
    {
      metadata: { name: "public", labels: { tier: "edge" } },
      spec: { addresses: ["198.51.100.0/24", "2001:db8:5::/64"] },
    },
    {
      metadata: { name: "rack-a" },
      spec: { addresses: ["203.0.113.0/28"], nodeSelectors: [{ matchLabels: { rack: "a" } }] },
    },
    { metadata: { name: "lan" }, spec: { addresses: ["192.0.2.128/28"] } },
  ],
  "portico.io",
).pools;

const peers = readPeers(
  [
    { metadata: { name: "tor-1" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.1" } },
    { metadata: { name: "tor-2" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.2" } },
    { metadata: { name: "tor-6" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "2001:db8::2" } },
  ],
  "portico.io",
).peers;

function service(
  key: string,
  address: string | string[],
  extra: Partial<AnnouncedService> = {},
): AnnouncedService {
  const addresses = Array.isArray(address) ? address : [address];
  const pool = (a: string) =>
    a.startsWith("198.51") || a.startsWith("2001") ? "public" : a.startsWith("203") ? "rack-a" : "lan";
  return {
    key,
    addresses,
    local: false,
    endpointNodes: new Set(["node-2"]),
    hasReadyEndpoint: true,
    pools: new Map(addresses.map((a) => [a, pool(a)] as const)),
    labels: {},
    ...extra,
  };
}

function ads(...specs: Record<string, unknown>[]) {
  const read = readBgpAdvertisements(
    specs.map((spec, i) => ({ metadata: { name: `ad-${i}` }, spec })),
    "portico.io",
  );
  expect(read.problems).toEqual([]);
  return read.ads;
}

function input(overrides: Partial<RouteInput>): RouteInput {
  return {
    node: "node-1",
    nodeLabels: { rack: "a" },
    eligible: true,
    eligibleForLocal: true,
    services: [],
    pools,
    ads: ads({ ipAddressPools: ["public"] }),
    peers,
    ...overrides,
  };
}

describe("who advertises", () => {
  test("Cluster: every eligible node advertises a /32 to every peer when the Service has a ready endpoint anywhere", () => {
    const routes = bgpRoutes(input({ services: [service("ns/web", "198.51.100.10")] }));
    expect(routes.prefixes.map((p) => [p.prefix, [...p.peers.keys()], p.services])).toEqual([
      ["198.51.100.10/32", ["tor-1", "tor-2"], ["ns/web"]],
    ]);
  });

  test("Local: only a node with a ready endpoint advertises", () => {
    const local = service("ns/web", "198.51.100.10", { local: true });
    expect(bgpRoutes(input({ services: [local] })).prefixes).toEqual([]);
    expect(bgpRoutes(input({ services: [local] })).withheld.get("198.51.100.10")).toBe("noLocalEndpoint");
    expect(bgpRoutes(input({ node: "node-2", services: [local] })).prefixes).toHaveLength(1);
  });

  test("no ready endpoint anywhere: nobody advertises", () => {
    const idle = service("ns/web", "198.51.100.10", { hasReadyEndpoint: false, endpointNodes: new Set() });
    const routes = bgpRoutes(input({ services: [idle] }));
    expect(routes.prefixes).toEqual([]);
    expect(routes.withheld.get("198.51.100.10")).toBe("noReadyEndpoint");
  });

  test("a node that is not Ready, excluded or stopping advertises nothing", () => {
    const routes = bgpRoutes(input({ eligible: false, services: [service("ns/web", "198.51.100.10")] }));
    expect(routes.prefixes).toEqual([]);
    expect(routes.withheld.get("198.51.100.10")).toBe("nodeNotEligible");
  });

  test("a cordoned node withdraws Cluster Services' addresses but keeps advertising its own Local endpoints'", () => {
    const cordoned = { node: "node-2", eligible: false, eligibleForLocal: true };
    const local = service("ns/local", "198.51.100.11", { local: true });
    const routes = bgpRoutes(input({ ...cordoned, services: [service("ns/web", "198.51.100.10"), local] }));
    expect(routes.prefixes.map((p) => p.prefix)).toEqual(["198.51.100.11/32"]);
    expect(routes.withheld.get("198.51.100.10")).toBe("nodeNotEligible");
  });

  test("a pool no BGPAdvertisement selects is not advertised over BGP, and not reported as withheld", () => {
    const routes = bgpRoutes(input({ services: [service("ns/lan", "192.0.2.130")] }));
    expect(routes.prefixes).toEqual([]);
    expect(routes.withheld.size).toBe(0);
    expect(bgpSelectedPools(pools, ads({ ipAddressPools: ["public"] }))).toEqual(new Set(["public"]));
    expect(bgpSelectedPools(pools, ads({}))).toEqual(new Set(["public", "rack-a", "lan"]));
  });

  test("the pool's and the advertisement's nodeSelectors both restrict", () => {
    const everything = ads({});
    const rackA = service("ns/a", "203.0.113.5");
    expect(bgpRoutes(input({ ads: everything, services: [rackA] })).prefixes).toHaveLength(1);
    expect(
      bgpRoutes(input({ ads: everything, nodeLabels: { rack: "b" }, services: [rackA] })).withheld.get(
        "203.0.113.5",
      ),
    ).toBe("nodeNotEligible");
    const onlyB = ads({ nodeSelectors: [{ matchLabels: { rack: "b" } }] });
    expect(bgpRoutes(input({ ads: onlyB, services: [service("ns/web", "198.51.100.10")] })).prefixes).toEqual(
      [],
    );
  });

  test("serviceSelectors pick the Services an advertisement applies to", () => {
    const selective = ads({ serviceSelectors: [{ matchLabels: { bgp: "yes" } }] });
    const yes = service("ns/yes", "198.51.100.1", { labels: { bgp: "yes" } });
    const no = service("ns/no", "198.51.100.2");
    expect(bgpRoutes(input({ ads: selective, services: [yes, no] })).prefixes.map((p) => p.prefix)).toEqual([
      "198.51.100.1/32",
    ]);
  });

  test("a node without peers withholds, saying so", () => {
    const routes = bgpRoutes(input({ peers: [], services: [service("ns/web", "198.51.100.10")] }));
    expect(routes.withheld.get("198.51.100.10")).toBe("noPeer");
  });
});

describe("what is advertised", () => {
  test("peers restricts to the named peers; an unknown name sends nothing", () => {
    const toOne = ads({ peers: ["tor-2"] });
    const routes = bgpRoutes(input({ ads: toOne, services: [service("ns/web", "198.51.100.10")] }));
    expect([...routes.prefixes[0]!.peers.keys()]).toEqual(["tor-2"]);
    const nowhere = bgpRoutes(
      input({ ads: ads({ peers: ["tor-9"] }), services: [service("ns/web", "198.51.100.10")] }),
    );
    expect(nowhere.prefixes).toEqual([]);
    expect(nowhere.withheld.get("198.51.100.10")).toBe("noPeer");
  });

  test("aggregation lengths per family widen the prefix, and Services sharing it are listed once", () => {
    const wide = ads({ aggregationLength: 24, aggregationLengthV6: 64 });
    const routes = bgpRoutes(
      input({
        ads: wide,
        services: [service("ns/a", ["198.51.100.10", "2001:db8:5::10"]), service("ns/b", "198.51.100.77")],
      }),
    );
    expect(routes.prefixes.map((p) => [p.prefix, p.family, p.services, [...p.peers.keys()]])).toEqual([
      ["198.51.100.0/24", "IPv4", ["ns/a", "ns/b"], ["tor-1", "tor-2"]],
      ["2001:db8:5::/64", "IPv6", ["ns/a"], ["tor-6"]],
    ]);
  });

  test("communities, large communities and local preference of every applying advertisement are combined", () => {
    const two = ads(
      { communities: ["65000:100", "no-export"], localPref: 50 },
      { communities: ["large:65000:1:2"], localPref: 200, peers: ["tor-1"] },
    );
    const routes = bgpRoutes(input({ ads: two, services: [service("ns/web", "198.51.100.10")] }));
    const [prefix] = routes.prefixes;
    expect(prefix!.peers.get("tor-1")).toEqual({
      communities: ["65000:100", "no-export"],
      largeCommunities: ["65000:1:2"],
      localPref: 200,
    });
    expect(prefix!.peers.get("tor-2")).toEqual({
      communities: ["65000:100", "no-export"],
      largeCommunities: [],
      localPref: 50,
    });
    expect(routes.problems).toEqual([
      "198.51.100.10/32 to peer tor-1: BGPAdvertisements give local preferences 50 and 200; the higher is used",
    ]);
  });

  test("MetalLB's advertisements reach MetalLB's peers only", () => {
    const metallbPeers = readPeers(
      [
        {
          metadata: { name: "tor", namespace: "metallb-system" },
          spec: { myASN: 1, peerASN: 2, peerAddress: "10.0.0.1" },
        },
      ],
      "metallb.io",
    ).peers;
    const routes = bgpRoutes(
      input({ peers: [...peers, ...metallbPeers], services: [service("ns/web", "198.51.100.10")] }),
    );
    expect([...routes.prefixes[0]!.peers.keys()]).toEqual(["tor-1", "tor-2"]);
  });
});

test("maskedPrefix keeps the network bits only", () => {
  expect(maskedPrefix("IPv4", 0xc6336465n, 24)).toBe("198.51.100.0/24");
  expect(maskedPrefix("IPv4", 0xc6336465n, 32)).toBe("198.51.100.101/32");
  expect(maskedPrefix("IPv4", 0xc6336465n, 0)).toBe("0.0.0.0/0");
  expect(maskedPrefix("IPv6", (0x20010db8n << 96n) | 0xffn, 120)).toBe("2001:db8::/120");
});
