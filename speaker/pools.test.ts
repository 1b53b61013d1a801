import { describe, expect, test } from "vitest";
import { readPools } from "./pools.ts";

const pool = (name: string, spec: unknown) => ({ metadata: { name, resourceVersion: "1" }, spec });

describe("reading IPAddressPools for announcing", () => {
  test("ranges, allocation settings and node selectors as written", () => {
    const { pools, problems } = readPools([
      pool("lan", {
        addresses: ["192.0.2.0/28", "192.0.2.100-192.0.2.110", "2001:db8::/120"],
        serviceAllocation: {
          priority: 5,
          namespaces: ["web"],
          namespaceSelectors: [{ matchLabels: { team: "web" } }],
          serviceSelectors: [{ matchLabels: { tier: "front" } }],
        },
        nodeSelectors: [{ matchLabels: { edge: "true" } }],
      }),
    ]);
    expect(problems).toEqual([]);
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({
      name: "lan",
      priority: 5,
      namespaces: ["web"],
      selectsNamespaces: true,
      serviceSelectors: [{ matchLabels: { tier: "front" } }],
      nodeSelectors: [{ matchLabels: { edge: "true" } }],
    });
    expect(pools[0]!.ranges.map((r) => [r.family, r.last - r.first + 1n])).toEqual([
      ["IPv4", 16n],
      ["IPv4", 11n],
      ["IPv6", 256n],
    ]);
  });

  test("a pool without optional fields has no priority, no restrictions and no node selectors", () => {
    const { pools } = readPools([pool("plain", { addresses: ["192.0.2.0/30"] })]);
    expect(pools[0]).toMatchObject({
      priority: undefined,
      namespaces: [],
      selectsNamespaces: false,
      serviceSelectors: [],
      nodeSelectors: [],
    });
  });

  test("an invalid entry is reported and skipped; the rest of the pool, selectors included, still applies", () => {
    // Overlapping entries make the controller refuse the pool, but it may have handed addresses out before.
    const { pools, problems } = readPools([
      pool("edited", {
        addresses: ["192.0.2.0/24", "192.0.2.7", "192.0.2.0/25", 42],
        nodeSelectors: [{ matchLabels: { edge: "true" } }],
      }),
    ]);
    expect(pools[0]!.ranges).toHaveLength(2);
    expect(pools[0]!.nodeSelectors).toEqual([{ matchLabels: { edge: "true" } }]);
    expect(problems).toEqual([
      expect.stringMatching(/^IPAddressPool edited: spec\.addresses\[1\] ignored: .*bare address/),
      "IPAddressPool edited: spec.addresses[3] ignored: not a string",
    ]);
  });

  test("an unreadable node selector stays in the list as one that selects no node", () => {
    const { pools, problems } = readPools([
      pool("odd", {
        addresses: ["192.0.2.0/30"],
        nodeSelectors: [{ matchLabels: { edge: 1 } }, { matchLabels: { zone: "a" } }],
      }),
    ]);
    expect(pools[0]!.nodeSelectors).toEqual([null, { matchLabels: { zone: "a" } }]);
    expect(problems).toEqual([expect.stringMatching(/nodeSelectors\[0\]\.matchLabels.*selects no node$/)]);
  });

  test("an unreadable Service selector is left out: it only tells overlapping pools apart", () => {
    const { pools, problems } = readPools([
      pool("odd", {
        addresses: ["192.0.2.0/30"],
        serviceAllocation: { serviceSelectors: [{ matchExpressions: [{ key: "a", operator: "Near" }] }] },
      }),
    ]);
    expect(pools[0]!.serviceSelectors).toEqual([]);
    expect(problems).toEqual([expect.stringMatching(/operator must be one of.*left out$/)]);
  });

  test("objects without a name or with a spec that is no object are read as far as possible", () => {
    const { pools } = readPools([{ spec: { addresses: ["192.0.2.0/30"] } }, pool("broken", "nonsense")]);
    expect(pools).toEqual([
      {
        name: "broken",
        key: "broken",
        group: "portico.io",
        labels: {},
        ranges: [],
        priority: undefined,
        namespaces: [],
        selectsNamespaces: false,
        serviceSelectors: [],
        nodeSelectors: [],
      },
    ]);
  });
});
