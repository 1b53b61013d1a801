import { expect, test } from "vitest";
import type { BgpStatusRecord } from "../../shared/bgpStatus.ts";
import type { AdvertisedPrefix } from "./routes.ts";
import { planBgpStatuses, type BgpStatusInput } from "./statusPlan.ts";

const plain = { communities: [], largeCommunities: [] };
const prefix = (text: string, peers: string[], services: string[]): AdvertisedPrefix => ({
  prefix: text,
  family: "IPv4",
  peers: new Map(peers.map((p) => [p, plain] as const)),
  services,
});

function input(overrides: Partial<BgpStatusInput>): BgpStatusInput {
  return {
    node: "n1",
    prefixes: [prefix("198.51.100.10/32", ["tor-a", "tor-b"], ["ns/web"])],
    established: new Map([
      ["tor-a", "tor-a"],
      ["tor-b", "tor-b"],
    ]),
    services: new Map([
      ["ns/web", { uid: "u1", addresses: ["198.51.100.10"] }],
      ["ns/api", { uid: "u2", addresses: ["198.51.100.20", "198.51.100.21"] }],
    ]),
    existing: [],
    live: new Set(["n1", "n2"]),
    ...overrides,
  };
}

const record = (node: string, service: string, addresses: string[], peers: string[]): BgpStatusRecord => ({
  name: `${service}-${node}`,
  namespace: "ns",
  status: { node, serviceName: service, serviceNamespace: "ns", addresses, peers },
});

test("a record per Service this node advertises over established sessions, naming those peers", () => {
  const plan = planBgpStatuses(input({ established: new Map([["tor-b", "tor-b"]]) }));
  expect(plan.write).toEqual([
    expect.objectContaining({
      namespace: "ns",
      serviceUid: "u1",
      status: {
        node: "n1",
        serviceName: "web",
        serviceNamespace: "ns",
        peers: ["tor-b"],
        addresses: ["198.51.100.10"],
      },
    }),
  ]);
  expect(plan.remove).toEqual([]);
});

test("no established session, or nothing applied yet: no record, and an old one of this node goes", () => {
  const old = record("n1", "web", ["198.51.100.10"], ["tor-a"]);
  expect(planBgpStatuses(input({ established: new Map(), existing: [old] }))).toEqual({
    write: [],
    remove: [{ name: old.name, namespace: "ns" }],
  });
  expect(planBgpStatuses(input({ prefixes: [], existing: [old] })).remove).toHaveLength(1);
});

test("an aggregated prefix counts every address of the Service it holds; unchanged records are not rewritten", () => {
  const wide = [prefix("198.51.100.0/24", ["tor-a"], ["ns/api"])];
  const plan = planBgpStatuses(input({ prefixes: wide }));
  expect(plan.write[0]!.status.addresses).toEqual(["198.51.100.20", "198.51.100.21"]);
  const again = planBgpStatuses(
    input({ prefixes: wide, existing: [{ ...plan.write[0]!, status: plan.write[0]!.status }] }),
  );
  expect(again).toEqual({ write: [], remove: [] });
});

test("the first live speaker by name removes the records of dead nodes; others leave them", () => {
  const dead = record("n9", "web", ["198.51.100.10"], ["tor-a"]);
  const alive = record("n2", "web", ["198.51.100.10"], ["tor-a"]);
  expect(planBgpStatuses(input({ existing: [dead, alive] })).remove).toEqual([
    { name: dead.name, namespace: "ns" },
  ]);
  expect(planBgpStatuses(input({ node: "n2", existing: [dead] })).remove).toEqual([]);
});
