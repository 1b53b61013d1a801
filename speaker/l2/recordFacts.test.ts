import type { V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import type { AddressAssignment } from "./assignment.ts";
import { recordFacts } from "./recordFacts.ts";

const svc = (name: string): V1Service => ({ metadata: { name, namespace: "apps", uid: `uid-${name}` } });
const services = new Map([
  ["apps/web", svc("web")],
  ["apps/db", svc("db")],
]);
const assignments = new Map<string, AddressAssignment>([
  ["192.0.2.1", { address: "192.0.2.1", services: ["apps/web"], pool: "lan", announcer: "n1" }],
  ["192.0.2.2", { address: "192.0.2.2", services: ["apps/web"], pool: "lan", announcer: "n1" }],
  [
    "192.0.2.3",
    {
      address: "192.0.2.3",
      services: ["apps/db"],
      pool: "edge",
      announcer: undefined,
      unmatched: { reporter: "n1" },
    },
  ],
  ["192.0.2.4", { address: "192.0.2.4", services: ["apps/db"], pool: "lan", announcer: "n2" }],
]);

describe("what a node records", () => {
  test("what it answers for, what it reports unannounced, and what it found in use", () => {
    const facts = recordFacts({
      node: "n1",
      assignments,
      services,
      rules: { reason: () => "noMatchingNode" },
      answering: new Set(["192.0.2.1"]),
      interfaces: () => ["eth0"],
      inUse: (address) => (address === "192.0.2.2" ? "02:00:00:00:00:99" : undefined),
    });
    expect(facts.announced).toEqual([
      { service: "apps/web", uid: "uid-web", address: "192.0.2.1", interfaces: ["eth0"] },
    ]);
    expect(facts.inUse).toEqual([
      { service: "apps/web", uid: "uid-web", inUse: { address: "192.0.2.2", mac: "02:00:00:00:00:99" } },
    ]);
    expect(facts.reported).toEqual([
      { service: "apps/db", uid: "uid-db", notAnnounced: { address: "192.0.2.3", reason: "noMatchingNode" } },
    ]);
  });
});
