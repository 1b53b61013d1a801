import { describe, expect, test } from "vitest";
import { l2StatusName, readL2Status, trimL2Status, type L2StatusRecord } from "../../shared/l2status.ts";
import { planL2Statuses, type L2StatusInput } from "./statusPlan.ts";

const existing = (node: string, addresses: string[], service = "web"): L2StatusRecord => ({
  name: l2StatusName(service, node),
  namespace: "apps",
  status: {
    node,
    serviceName: service,
    serviceNamespace: "apps",
    interfaces: [{ name: "eth0" }],
    addresses,
  },
});

const input = (over: Partial<L2StatusInput>): L2StatusInput => ({
  node: "n1",
  announced: [],
  reported: [],
  existing: [],
  live: new Set(["n1", "n2", "n3"]),
  ...over,
});

const announcing = (address: string, interfaces = ["eth0"], service = "apps/web") => ({
  service,
  uid: "uid-web",
  address,
  interfaces,
});

describe("the records a speaker writes", () => {
  test("one per Service it announces, with its addresses and interfaces, owned by the Service", () => {
    const plan = planL2Statuses(
      input({ announced: [announcing("2001:db8::1", ["eth1"]), announcing("192.0.2.1", ["eth0"])] }),
    );
    expect(plan.remove).toEqual([]);
    expect(plan.write).toEqual([
      {
        name: l2StatusName("web", "n1"),
        namespace: "apps",
        serviceUid: "uid-web",
        status: {
          node: "n1",
          serviceName: "web",
          serviceNamespace: "apps",
          interfaces: [{ name: "eth0" }, { name: "eth1" }],
          addresses: ["192.0.2.1", "2001:db8::1"],
        },
      },
    ]);
  });

  test("nothing to write when the cache already holds it; written again when it differs", () => {
    expect(
      planL2Statuses(
        input({ announced: [announcing("192.0.2.1")], existing: [existing("n1", ["192.0.2.1"])] }),
      ),
    ).toEqual({ write: [], remove: [] });
    const moved = planL2Statuses(
      input({ announced: [announcing("192.0.2.1", ["eth1"])], existing: [existing("n1", ["192.0.2.1"])] }),
    );
    expect(moved.write.map((w) => w.status.interfaces)).toEqual([[{ name: "eth1" }]]);
  });

  test("its own records it no longer needs are deleted", () => {
    const plan = planL2Statuses(input({ existing: [existing("n1", ["192.0.2.1"])] }));
    expect(plan.remove).toEqual([{ name: l2StatusName("web", "n1"), namespace: "apps" }]);
  });

  test("the new announcer deletes the claim of the node it took the address over from", () => {
    const plan = planL2Statuses(
      input({
        announced: [announcing("192.0.2.1")],
        existing: [existing("n2", ["192.0.2.1"]), existing("n3", ["192.0.2.9"], "other")],
      }),
    );
    expect(plan.remove).toEqual([{ name: l2StatusName("web", "n2"), namespace: "apps" }]);
    expect(plan.write).toHaveLength(1);
  });

  test("records of dead speakers are deleted by the first live speaker only", () => {
    const stale = [existing("gone", ["192.0.2.1"])];
    const live = new Set(["n1", "n2"]);
    expect(planL2Statuses(input({ node: "n1", existing: stale, live })).remove).toEqual([
      { name: l2StatusName("web", "gone"), namespace: "apps" },
    ]);
    expect(planL2Statuses(input({ node: "n2", existing: stale, live })).remove).toEqual([]);
    // A live node's record is its own to keep or delete.
    expect(
      planL2Statuses(input({ node: "n1", existing: [existing("n2", ["192.0.2.1"])], live })).remove,
    ).toEqual([]);
  });

  test("the reporting node records why addresses are not announced", () => {
    const plan = planL2Statuses(
      input({
        reported: [
          {
            service: "apps/web",
            uid: "uid-web",
            notAnnounced: { address: "192.0.2.9", reason: "noAdvertisement" },
          },
          {
            service: "apps/web",
            uid: "uid-web",
            notAnnounced: { address: "192.0.2.2", reason: "noMatchingNode" },
          },
        ],
      }),
    );
    expect(plan.write[0]?.status).toMatchObject({
      addresses: [],
      notAnnounced: [
        { address: "192.0.2.2", reason: "noMatchingNode" },
        { address: "192.0.2.9", reason: "noAdvertisement" },
      ],
    });
  });
});

describe("records as read back", () => {
  test("fields of the wrong type read as absent; the name is the Service's with the node's hash", () => {
    expect(
      readL2Status({
        metadata: { name: "web-x", namespace: "apps", labels: { "portico.io/node": "n1" } },
        status: { serviceName: "web", addresses: ["192.0.2.1", 7], interfaces: [{ name: "eth0" }, "eth1"] },
      }),
    ).toEqual({
      name: "web-x",
      namespace: "apps",
      status: {
        node: "n1",
        serviceName: "web",
        serviceNamespace: "apps",
        interfaces: [{ name: "eth0" }],
        addresses: ["192.0.2.1"],
        notAnnounced: [],
        inUse: [],
      },
    });
    expect(readL2Status({ metadata: { name: "x", namespace: "apps" }, status: {} })).toBeUndefined();
    expect(l2StatusName("web", "n1")).toMatch(/^web-[0-9a-f]{10}$/);
    expect(l2StatusName("web", "n1")).not.toBe(l2StatusName("web", "n2"));
  });
});

describe("addresses found in use", () => {
  test("are recorded by the node that probed them, beside what it announces", () => {
    const plan = planL2Statuses(
      input({
        announced: [announcing("192.0.2.1")],
        inUse: [
          { service: "apps/web", uid: "uid-web", inUse: { address: "192.0.2.3", mac: "02:00:00:00:00:99" } },
        ],
      }),
    );
    expect(plan.write[0]?.status).toMatchObject({
      addresses: ["192.0.2.1"],
      inUse: [{ address: "192.0.2.3", mac: "02:00:00:00:00:99" }],
    });
  });
});

test("a cached record keeps only what its readers use", () => {
  const obj = {
    metadata: {
      name: "web-x",
      namespace: "apps",
      resourceVersion: "7",
      labels: { "portico.io/node": "n1" },
      managedFields: [{ manager: "speaker" }],
      ownerReferences: [{ kind: "Service" }],
    },
    spec: {},
    status: { node: "n1", serviceName: "web", addresses: ["192.0.2.1"] },
  };
  trimL2Status(obj);
  expect(obj).toEqual({
    metadata: { name: "web-x", namespace: "apps", resourceVersion: "7", labels: { "portico.io/node": "n1" } },
    status: { node: "n1", serviceName: "web", addresses: ["192.0.2.1"] },
  });
});
