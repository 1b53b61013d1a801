import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { addressesOf, assignAddresses } from "./assignment.ts";
import { electAnnouncer } from "./election.ts";
import { readPools } from "../pools.ts";
import { announcedServices, nodeAddresses, schedulableNodes, type AnnouncedService } from "../serviceView.ts";

const METAL = { loadBalancerClass: "portico.io/metal", defaultForUnclassed: false };

function service(
  name: string,
  opts: { cls?: string | null; ips?: string[]; local?: boolean; type?: string } = {},
): V1Service {
  return {
    metadata: { namespace: "ns", name },
    spec: {
      type: opts.type ?? "LoadBalancer",
      ...(opts.cls === null ? {} : { loadBalancerClass: opts.cls ?? "portico.io/metal" }),
      externalTrafficPolicy: opts.local ? "Local" : "Cluster",
    },
    status: { loadBalancer: { ingress: (opts.ips ?? ["192.0.2.10"]).map((ip) => ({ ip })) } },
  };
}

function slice(svc: string, endpoints: { node?: string; ready?: boolean }[]): V1EndpointSlice {
  return {
    metadata: { namespace: "ns", name: `${svc}-x`, labels: { "kubernetes.io/service-name": svc } },
    addressType: "IPv4",
    endpoints: endpoints.map((e, i) => ({
      addresses: [`10.0.0.${i + 1}`],
      nodeName: e.node,
      conditions: e.ready === undefined ? {} : { ready: e.ready },
    })),
  };
}

function node(name: string, opts: { ready?: boolean; exclude?: boolean; ip?: string } = {}): V1Node {
  return {
    metadata: {
      name,
      labels: opts.exclude ? { "node.kubernetes.io/exclude-from-external-load-balancers": "" } : {},
    },
    status: {
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
      addresses: opts.ip
        ? [
            { type: "Hostname", address: name },
            { type: "InternalIP", address: opts.ip },
          ]
        : [],
    },
  };
}

const elect = (address: string, candidates: ReadonlySet<string>) => electAnnouncer(address, candidates);
const nodes = new Set(["a", "b", "c", "d"]);

describe("which Services are announced", () => {
  test("LoadBalancer Services of the metal class with an ingress IP, addresses canonical and unique", () => {
    const services = announcedServices(
      [
        service("web", { ips: ["2001:DB8::0001", "2001:db8::1", "192.0.2.10"] }),
        service("other-class", { cls: "portico.io/aws-nlb" }),
        service("unclassed", { cls: null }),
        service("cluster-ip", { type: "ClusterIP" }),
        service("pending", { ips: [] }),
      ],
      [slice("web", [{ node: "a" }])],
      METAL,
    );
    expect(services.map((s) => [s.key, s.addresses])).toEqual([["ns/web", ["2001:db8::1", "192.0.2.10"]]]);
  });

  test("unclassed Services too when configured as the default implementation", () => {
    const services = announcedServices([service("unclassed", { cls: null })], [], {
      ...METAL,
      defaultForUnclassed: true,
    });
    expect(services.map((s) => s.key)).toEqual(["ns/unclassed"]);
  });

  test("ready endpoints: nil readiness counts as ready, not-ready ones and other Services' slices do not", () => {
    const [web] = announcedServices(
      [service("web")],
      [
        slice("web", [{ node: "a" }, { node: "b", ready: false }, { ready: true }]),
        slice("api", [{ node: "c" }]),
      ],
      METAL,
    );
    expect(web?.hasReadyEndpoint).toBe(true);
    expect([...(web?.endpointNodes ?? [])]).toEqual(["a"]);
  });
});

describe("which nodes may announce", () => {
  test("Ready nodes without the exclusion label, not cordoned, unless all are (the controller's rule)", () => {
    const cordoned = (name: string) => ({ ...node(name), spec: { unschedulable: true } });
    const eligible = schedulableNodes([
      node("a"),
      node("b", { ready: false }),
      node("c", { exclude: true }),
      cordoned("d"),
    ]);
    expect([...eligible]).toEqual(["a"]);
    expect([...schedulableNodes([cordoned("d"), cordoned("e"), node("f", { exclude: true })])]).toEqual([
      "d",
      "e",
    ]);
    // For Local Services a cordoned node stays: its own pods are the only ones its traffic can reach.
    expect([...schedulableNodes([node("a"), cordoned("d")], "Local")]).toEqual(["a", "d"]);
  });

  test("membership traffic goes to a node's InternalIP", () => {
    expect(nodeAddresses([node("a", { ip: "192.0.2.1" }), node("b")])).toEqual(new Map([["a", "192.0.2.1"]]));
  });
});

describe("the announce decision", () => {
  const svc = (key: string, over: Partial<AnnouncedService> = {}): AnnouncedService => ({
    key,
    addresses: ["192.0.2.10"],
    local: false,
    endpointNodes: new Set(["a"]),
    hasReadyEndpoint: true,
    pools: new Map(),
    labels: {},
    ...over,
  });

  test("Cluster policy: elected among all eligible nodes, exactly as the shared election", () => {
    const result = assignAddresses([svc("ns/web")], nodes, elect);
    expect(result.get("192.0.2.10")).toEqual({
      address: "192.0.2.10",
      services: ["ns/web"],
      pool: undefined,
      announcer: electAnnouncer("192.0.2.10", nodes),
    });
  });

  test("a Service without a ready endpoint is not announced at all", () => {
    const result = assignAddresses(
      [svc("ns/web", { hasReadyEndpoint: false, endpointNodes: new Set() })],
      nodes,
      elect,
    );
    expect(result.size).toBe(0);
  });

  test("Local policy: only a node with a ready endpoint, and only if it is eligible", () => {
    const local = svc("ns/web", { local: true, endpointNodes: new Set(["c", "z"]) });
    expect(assignAddresses([local], nodes, elect).get("192.0.2.10")?.announcer).toBe("c");
    const onIneligible = svc("ns/web", { local: true, endpointNodes: new Set(["z"]) });
    expect(assignAddresses([onIneligible], nodes, elect).get("192.0.2.10")?.announcer).toBeUndefined();
  });

  test("a Local Service whose endpoint is on a cordoned node is announced from it; a Cluster one moves away", () => {
    const eligible = { Cluster: new Set(["a", "b"]), Local: new Set(["a", "b", "c"]) };
    const local = svc("ns/local", { addresses: ["192.0.2.11"], local: true, endpointNodes: new Set(["c"]) });
    const result = assignAddresses(
      [svc("ns/web", { endpointNodes: new Set(["c"]) }), local],
      eligible,
      elect,
    );
    expect(result.get("192.0.2.11")?.announcer).toBe("c");
    expect(["a", "b"]).toContain(result.get("192.0.2.10")?.announcer);
  });

  test("Local policy follows the endpoint when it moves", () => {
    for (const where of ["a", "b", "c", "d"]) {
      const local = svc("ns/web", { local: true, endpointNodes: new Set([where]) });
      expect(assignAddresses([local], nodes, elect).get("192.0.2.10")?.announcer).toBe(where);
    }
  });

  test("a shared address goes to a node serving every sharing Service when there is one", () => {
    const result = assignAddresses(
      [
        svc("ns/a", { local: true, endpointNodes: new Set(["b", "c"]) }),
        svc("ns/b", { local: true, endpointNodes: new Set(["c", "d"]) }),
      ],
      nodes,
      elect,
    );
    expect(result.get("192.0.2.10")).toMatchObject({ services: ["ns/a", "ns/b"], announcer: "c" });
  });

  test("a shared address with no common node goes to a node serving one of them", () => {
    const result = assignAddresses(
      [
        svc("ns/a", { local: true, endpointNodes: new Set(["a"]) }),
        svc("ns/b", { local: true, endpointNodes: new Set(["b"]) }),
      ],
      nodes,
      elect,
    );
    expect(["a", "b"]).toContain(result.get("192.0.2.10")?.announcer);
  });

  test("every node computes the same assignment, and each address has exactly one announcer", () => {
    const services = Array.from({ length: 50 }, (_, i) =>
      svc(`ns/s${i}`, { addresses: [`192.0.2.${i + 1}`] }),
    );
    const result = assignAddresses(services, nodes, elect);
    const owned = [...nodes].flatMap((n) => addressesOf(n, result));
    expect(owned.sort()).toEqual([...result.keys()].sort());
    expect(new Set(owned).size).toBe(50);
    // Spread over the nodes rather than all on one.
    expect(new Set([...result.values()].map((a) => a.announcer)).size).toBeGreaterThan(1);
  });
});

describe("the announce decision with pool node selectors", () => {
  const svc = (key: string, over: Partial<AnnouncedService> = {}): AnnouncedService => ({
    key,
    addresses: ["192.0.2.10"],
    local: false,
    endpointNodes: new Set(["a"]),
    hasReadyEndpoint: true,
    pools: new Map([["192.0.2.10", "edge"]]),
    labels: {},
    ...over,
  });
  const only =
    (...allowed: string[]) =>
    (pool: string) =>
      pool === "edge" ? new Set(allowed) : undefined;

  test("only the pool's matching nodes take part, and the winner is the shared election among them", () => {
    for (const allowed of [["a"], ["b", "c"], ["a", "b", "d"], ["a", "b", "c", "d"]]) {
      const result = assignAddresses([svc("ns/web")], nodes, elect, only(...allowed));
      expect(result.get("192.0.2.10")).toEqual({
        address: "192.0.2.10",
        services: ["ns/web"],
        pool: "edge",
        announcer: electAnnouncer("192.0.2.10", allowed),
      });
    }
  });

  test("a matching node that is not eligible (NotReady, excluded, speaker dead) cannot announce", () => {
    const result = assignAddresses([svc("ns/web")], nodes, elect, only("b", "z"));
    expect(result.get("192.0.2.10")?.announcer).toBe("b");
  });

  test("no eligible node matches: nobody announces, and the node that would without selectors reports it", () => {
    const result = assignAddresses([svc("ns/web")], nodes, elect, only("z"));
    expect(result.get("192.0.2.10")).toEqual({
      address: "192.0.2.10",
      services: ["ns/web"],
      pool: "edge",
      announcer: undefined,
      unmatched: { reporter: electAnnouncer("192.0.2.10", nodes) },
    });
  });

  test("nothing to report when no node could announce anyway: the selectors are not the reason", () => {
    const result = assignAddresses([svc("ns/web")], new Set(), elect, only("a"));
    expect(result.get("192.0.2.10")).toMatchObject({ announcer: undefined });
    expect(result.get("192.0.2.10")?.unmatched).toBeUndefined();
  });

  test("addresses in no pool, or in a pool without selectors, are announced by any eligible node", () => {
    const unpooled = svc("ns/a", { addresses: ["192.0.2.20"], pools: new Map() });
    const open = svc("ns/b", { addresses: ["192.0.2.30"], pools: new Map([["192.0.2.30", "open"]]) });
    const result = assignAddresses([unpooled, open], nodes, elect, only());
    expect(result.get("192.0.2.20")?.announcer).toBe(electAnnouncer("192.0.2.20", nodes));
    expect(result.get("192.0.2.30")?.announcer).toBe(electAnnouncer("192.0.2.30", nodes));
  });

  test("Local policy: only a node with a ready endpoint that the pool also allows", () => {
    const local = svc("ns/web", { local: true, endpointNodes: new Set(["a", "b"]) });
    expect(assignAddresses([local], nodes, elect, only("b", "c")).get("192.0.2.10")?.announcer).toBe("b");
    const elsewhere = assignAddresses([local], nodes, elect, only("c", "d")).get("192.0.2.10");
    expect(elsewhere?.announcer).toBeUndefined();
    // Reported by the node the Local election alone would pick: one that runs an endpoint.
    expect(elsewhere?.unmatched?.reporter).toBe(electAnnouncer("192.0.2.10", ["a", "b"]));
  });

  test("a shared address goes to a node serving every sharing Service that the pool allows", () => {
    const result = assignAddresses(
      [
        svc("ns/a", { local: true, endpointNodes: new Set(["a", "b", "c"]) }),
        svc("ns/b", { local: true, endpointNodes: new Set(["b", "c", "d"]) }),
      ],
      nodes,
      elect,
      only("c", "d"),
    );
    expect(result.get("192.0.2.10")).toMatchObject({ services: ["ns/a", "ns/b"], announcer: "c" });
  });

  test("each node's view gives one announcer per address, always a matching node", () => {
    const services = Array.from({ length: 40 }, (_, i) =>
      svc(`ns/s${i}`, {
        addresses: [`192.0.2.${i + 1}`],
        pools: new Map([[`192.0.2.${i + 1}`, i % 2 ? "edge" : "open"]]),
      }),
    );
    const result = assignAddresses(services, nodes, elect, only("b", "d"));
    for (const assignment of result.values()) {
      if (assignment.pool === "edge") expect(["b", "d"]).toContain(assignment.announcer);
      else expect([...nodes]).toContain(assignment.announcer);
    }
    const owned = [...nodes].flatMap((n) => addressesOf(n, result));
    expect(owned.sort()).toEqual([...result.keys()].sort());
  });
});

describe("which pool each announced address came from", () => {
  test("read from the pools' ranges and recorded per address; addresses in no pool are left out", () => {
    const { pools } = readPools([
      { metadata: { name: "edge" }, spec: { addresses: ["192.0.2.0/28"] } },
      { metadata: { name: "v6" }, spec: { addresses: ["2001:db8::/120"] } },
    ]);
    const [web] = announcedServices(
      [service("web", { ips: ["192.0.2.5", "2001:db8::5", "198.51.100.1"] })],
      [slice("web", [{ node: "a" }])],
      METAL,
      pools,
    );
    expect(web?.pools).toEqual(
      new Map([
        ["192.0.2.5", "edge"],
        ["2001:db8::5", "v6"],
      ]),
    );
  });
});
