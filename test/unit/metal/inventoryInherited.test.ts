// The inventory the bare-metal provider rebuilds its allocator from: the controller's own addresses first, then
// those of Services it serves but has not addressed yet (MetalLB's), marked inherited; a refused one stays so.
import type { V1Service } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { ClusterCache } from "../../../controller/runtime/cache.ts";
import { MANAGED_BY_ANNOTATION } from "../../../providers/classes.ts";
import { metalInventory } from "../../../providers/metal/inventory.ts";
import { READY_CONDITION } from "../../../controller/status.ts";

const CLASS = "portico.io/metal";

function service(
  name: string,
  ip: string,
  opts: { created: string; cls?: string; managed?: boolean; ready?: { status: string; reason: string } },
): V1Service {
  return {
    metadata: {
      namespace: "ns",
      name,
      creationTimestamp: new Date(opts.created),
      ...(opts.managed ? { annotations: { [MANAGED_BY_ANNOTATION]: CLASS } } : {}),
    },
    spec: {
      type: "LoadBalancer",
      ...(opts.cls ? { loadBalancerClass: opts.cls } : {}),
      ports: [{ port: 80 }],
    },
    status: {
      loadBalancer: { ingress: [{ ip }] },
      ...(opts.ready
        ? {
            conditions: [
              {
                type: READY_CONDITION,
                ...opts.ready,
                message: "",
                lastTransitionTime: new Date(opts.created),
              },
            ],
          }
        : {}),
    },
  };
}

/** A cache that can only list, as porticoctl's snapshot of the cluster. */
const snapshot = (services: V1Service[]) =>
  ({
    services: { list: () => services },
    nodes: { list: () => [] },
    metallbPoolList: () => [],
  }) as unknown as ClusterCache;

describe("the bare-metal inventory", () => {
  const services = [
    service("metallbs", "192.0.2.1", { created: "2024-01-01T00:00:00Z" }),
    service("own", "192.0.2.2", {
      created: "2025-01-01T00:00:00Z",
      cls: CLASS,
      managed: true,
      ready: { status: "True", reason: "Provisioned" },
    }),
    service("claimed", "192.0.2.3", { created: "2023-01-01T00:00:00Z", cls: CLASS, managed: true }),
    service("refused", "10.9.9.9", {
      created: "2022-01-01T00:00:00Z",
      managed: true,
      ready: { status: "False", reason: "StatusAddressNotInPool" },
    }),
    service("others", "192.0.2.9", { created: "2021-01-01T00:00:00Z", cls: "example.com/other" }),
  ];
  const inventory = metalInventory(snapshot(services), {
    loadBalancerClass: CLASS,
    defaultForUnclassed: true,
  });

  it("reads the controller's own addresses first, then the inherited ones oldest first, and no other class's", () => {
    expect(inventory.assignments().map((a) => [a.serviceKey, a.addresses[0], a.inherited ?? false])).toEqual([
      ["ns/own", "192.0.2.2", false],
      ["ns/refused", "10.9.9.9", true],
      ["ns/claimed", "192.0.2.3", true],
      ["ns/metallbs", "192.0.2.1", true],
    ]);
  });

  it("reads a Service's status addresses from a cache that can only list", () => {
    expect(inventory.statusAddresses?.("ns", "metallbs")).toEqual(["192.0.2.1"]);
    expect(inventory.statusAddresses?.("ns", "missing")).toEqual([]);
  });
});
