import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { addressesOf, assignAddresses } from "./assignment.ts";
import { electAnnouncer } from "./election.ts";
import { announcedServices, nodeAddresses, schedulableNodes, type AnnouncedService } from "./serviceView.ts";

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
  test("Ready nodes without the exclusion label", () => {
    const eligible = schedulableNodes([node("a"), node("b", { ready: false }), node("c", { exclude: true })]);
    expect([...eligible]).toEqual(["a"]);
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
    ...over,
  });

  test("Cluster policy: elected among all eligible nodes, exactly as the shared election", () => {
    const result = assignAddresses([svc("ns/web")], nodes, elect);
    expect(result.get("192.0.2.10")).toEqual({
      address: "192.0.2.10",
      services: ["ns/web"],
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
