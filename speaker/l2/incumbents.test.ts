import { describe, expect, test } from "vitest";
import type { L2StatusRecord } from "../../shared/l2status.ts";
import { electAnnouncer } from "./election.ts";
import { incumbentsOf, keepIncumbents } from "./incumbents.ts";

const nodes = ["node-a", "node-b", "node-c", "node-d"];
const addresses = Array.from({ length: 40 }, (_, i) => (i % 2 ? `192.0.2.${i}` : `2001:db8::${i}`));
const elect = (address: string, candidates: ReadonlySet<string>) => electAnnouncer(address, candidates);

function record(node: string, addresses: string[], service = "web"): L2StatusRecord {
  return {
    name: `${service}-${node}`,
    namespace: "ns",
    status: { node, serviceName: service, serviceNamespace: "ns", addresses, interfaces: [] },
  };
}

/** An address whose preferred node among `nodes` is not `node`, and that node. */
function notPreferring(node: string): string {
  const address = addresses.find((a) => electAnnouncer(a, nodes) !== node);
  if (!address) throw new Error(`every address prefers ${node}`);
  return address;
}

describe("incumbents", () => {
  test("read from every record's addresses, in canonical form, several nodes per address", () => {
    const incumbents = incumbentsOf([
      record("node-a", ["192.0.2.1", "2001:db8::0001"]),
      record("node-b", ["192.0.2.1"], "other"),
    ]);
    expect(incumbents.get("192.0.2.1")).toEqual(new Set(["node-a", "node-b"]));
    expect(incumbents.get("2001:db8::1")).toEqual(new Set(["node-a"]));
    expect(incumbents.size).toBe(2);
  });

  test("an incumbent that is still a candidate keeps its address, though another node is preferred", () => {
    for (const node of nodes) {
      const address = notPreferring(node);
      const sticky = keepIncumbents(elect, incumbentsOf([record(node, [address])]));
      expect(sticky(address, new Set(nodes))).toBe(node);
    }
  });

  test("an incumbent that is no longer a candidate hands over to the election among the candidates", () => {
    const address = addresses[3]!;
    const preferred = electAnnouncer(address, nodes)!;
    const sticky = keepIncumbents(elect, incumbentsOf([record(preferred, [address])]));
    const others = new Set(nodes.filter((n) => n !== preferred));
    expect(sticky(address, others)).toBe(electAnnouncer(address, others));
    expect(sticky(address, new Set())).toBeUndefined();
  });

  test("between two recorded nodes (a hand-over in flight) the election decides among them, alike on every speaker", () => {
    for (const address of addresses) {
      const [first, second] = nodes.filter((n) => n !== electAnnouncer(address, nodes));
      const incumbents = incumbentsOf([record(first!, [address]), record(second!, [address])]);
      const chosen = keepIncumbents(elect, incumbents)(address, new Set(nodes));
      expect(chosen).toBe(electAnnouncer(address, [first!, second!]));
      const reversed = incumbentsOf([record(second!, [address]), record(first!, [address])]);
      expect(keepIncumbents(elect, reversed)(address, new Set(nodes))).toBe(chosen);
    }
  });

  test("an address nobody records, or recorded only by nodes that are not candidates, is elected as before", () => {
    const incumbents = incumbentsOf([record("node-gone", addresses)]);
    const sticky = keepIncumbents(elect, incumbents);
    for (const address of addresses)
      expect(sticky(address, new Set(nodes))).toBe(electAnnouncer(address, nodes));
    expect(keepIncumbents(elect, new Map())(addresses[0]!, new Set(nodes))).toBe(
      electAnnouncer(addresses[0]!, nodes),
    );
  });

  test("a record of another address does not hold this one", () => {
    const address = notPreferring("node-a");
    const elsewhere = addresses.find((a) => a !== address)!;
    const sticky = keepIncumbents(elect, incumbentsOf([record("node-a", [elsewhere])]));
    expect(sticky(address, new Set(nodes))).toBe(electAnnouncer(address, nodes));
  });
});
