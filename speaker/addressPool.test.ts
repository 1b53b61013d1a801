import { describe, expect, test } from "vitest";
import { findPool, poolOfAddress, recordedPools, type ServiceFacts } from "./addressPool.ts";
import { readPools, type AnnouncePool } from "./pools.ts";

function pools(specs: Record<string, Record<string, unknown>>): AnnouncePool[] {
  return readPools(Object.entries(specs).map(([name, spec]) => ({ metadata: { name }, spec }))).pools;
}

const web: ServiceFacts = { namespace: "web", labels: { tier: "front" }, annotations: {} };
const name = (address: string, service: ServiceFacts, from: AnnouncePool[]) =>
  poolOfAddress(address, service, from)?.name;

describe("the pool an address came from", () => {
  const separate = pools({
    lan: { addresses: ["192.0.2.0/28", "2001:db8::/120"] },
    dmz: { addresses: ["192.0.2.100-192.0.2.110"] },
  });

  test("the pool whose ranges hold it, for CIDRs and first-last ranges, IPv4 and IPv6", () => {
    expect(name("192.0.2.0", web, separate)).toBe("lan");
    expect(name("192.0.2.15", web, separate)).toBe("lan");
    expect(name("192.0.2.100", web, separate)).toBe("dmz");
    expect(name("192.0.2.110", web, separate)).toBe("dmz");
    expect(name("2001:db8::ff", web, separate)).toBe("lan");
    expect(name("2001:0db8:0000::00ff", web, separate)).toBe("lan");
  });

  test("none for an address outside every pool, or no address at all", () => {
    expect(name("192.0.2.16", web, separate)).toBeUndefined();
    expect(name("192.0.2.111", web, separate)).toBeUndefined();
    expect(name("2001:db8::1:0", web, separate)).toBeUndefined();
    expect(name("not-an-ip", web, separate)).toBeUndefined();
    expect(name("192.0.2.1", web, [])).toBeUndefined();
  });

  test("a single containing pool is the answer, whatever it allows: the controller gave the address out", () => {
    const confined = pools({
      other: { addresses: ["192.0.2.0/28"], serviceAllocation: { namespaces: ["db"] } },
    });
    expect(name("192.0.2.1", web, confined)).toBe("other");
  });

  describe("when pools overlap", () => {
    test("the pool the Service names, under any of the accepted annotations", () => {
      const overlapping = pools({
        a: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 1 } },
        b: { addresses: ["192.0.2.0/28"] },
      });
      for (const annotation of [
        "metallb.io/address-pool",
        "portico.io/address-pool",
        "metallb.universe.tf/address-pool",
      ]) {
        expect(name("192.0.2.1", { ...web, annotations: { [annotation]: "b" } }, overlapping)).toBe("b");
      }
      // A named pool that does not hold the address was not where it came from.
      expect(
        name("192.0.2.200", { ...web, annotations: { "metallb.io/address-pool": "b" } }, overlapping),
      ).toBe("a");
    });

    test("else the most preferred pool: lower priority first, pools without one last, then by name", () => {
      expect(
        name(
          "192.0.2.1",
          web,
          pools({
            z: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 1 } },
            a: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 2 } },
            b: { addresses: ["192.0.2.0/24"] },
          }),
        ),
      ).toBe("z");
      expect(
        name(
          "192.0.2.1",
          web,
          pools({ b: { addresses: ["192.0.2.0/24"] }, a: { addresses: ["192.0.2.0/24"] } }),
        ),
      ).toBe("a");
    });

    test("skipping pools that cannot serve the Service's namespace or labels", () => {
      const overlapping = pools({
        a: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 1, namespaces: ["db"] } },
        b: {
          addresses: ["192.0.2.0/24"],
          serviceAllocation: { priority: 2, serviceSelectors: [{ matchLabels: { tier: "back" } }] },
        },
        c: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 3, namespaces: ["web"] } },
      });
      expect(name("192.0.2.1", web, overlapping)).toBe("c");
      expect(name("192.0.2.1", { ...web, namespace: "db" }, overlapping)).toBe("a");
      expect(name("192.0.2.1", { ...web, labels: { tier: "back" } }, overlapping)).toBe("b");
    });

    test("a pool selecting namespaces by label is not ruled out: namespace labels are not known here", () => {
      const overlapping = pools({
        a: {
          addresses: ["192.0.2.0/24"],
          serviceAllocation: { priority: 1, namespaceSelectors: [{ matchLabels: { team: "db" } }] },
        },
        b: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 2 } },
      });
      expect(name("192.0.2.1", web, overlapping)).toBe("a");
    });

    test("the most preferred containing pool when none can serve the Service", () => {
      const overlapping = pools({
        a: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 2, namespaces: ["db"] } },
        b: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 1, namespaces: ["db"] } },
      });
      expect(name("192.0.2.1", web, overlapping)).toBe("b");
    });
  });
});

describe("the pool recorded on the Service decides between overlapping pools", () => {
  const overlapping = pools({
    a: { addresses: ["192.0.2.0/28"], serviceAllocation: { priority: 1 } },
    b: { addresses: ["192.0.2.0/28", "2001:db8::/120"], serviceAllocation: { priority: 2 } },
    v6: { addresses: ["2001:db8::/120"], serviceAllocation: { priority: 1 } },
  });
  const recorded = (annotations: Record<string, string>) => ({ ...web, annotations });

  test("Portico's record names the pool, even against the guess (the most preferred pool)", () => {
    const found = findPool("192.0.2.1", recorded({ "portico.io/ip-allocated-from-pool": "b" }), overlapping);
    expect([found?.pool.name, found?.source]).toEqual(["b", "recorded"]);
  });

  test("MetalLB's spelling is read for Services MetalLB addressed", () => {
    const found = findPool("192.0.2.1", recorded({ "metallb.io/ip-allocated-from-pool": "b" }), overlapping);
    expect([found?.pool.name, found?.source]).toEqual(["b", "recorded"]);
  });

  test("dual-stack from two pools: each address takes the named pool that holds it", () => {
    const both = recorded({ "portico.io/ip-allocated-from-pool": "a,v6" });
    expect(findPool("192.0.2.1", both, overlapping)?.pool.name).toBe("a");
    expect(findPool("2001:db8::1", both, overlapping)?.pool.name).toBe("v6");
    expect(recordedPools({ "portico.io/ip-allocated-from-pool": " a , v6 ," })).toEqual(["a", "v6"]);
  });

  test("without a record the speaker guesses, and says so; a single pool needs no record", () => {
    expect(findPool("192.0.2.1", web, overlapping)).toMatchObject({ pool: { name: "a" }, source: "guessed" });
    const stale = recorded({ "portico.io/ip-allocated-from-pool": "gone" });
    expect(findPool("192.0.2.1", stale, overlapping)?.source).toBe("guessed");
    const single = pools({ only: { addresses: ["192.0.2.0/28"] } });
    expect(findPool("192.0.2.1", web, single)).toMatchObject({ pool: { name: "only" }, source: "only" });
  });
});
