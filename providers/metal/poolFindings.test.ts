import { describe, expect, it } from "vitest";
import { findNodeAddressesInPools, findOverlappingPools } from "./poolFindings.ts";
import { pool } from "../../test/unit/support/metal.ts";

describe("findOverlappingPools", () => {
  it("reports each overlapping pair once, with the shared addresses", () => {
    const findings = findOverlappingPools([
      pool("c", { addresses: ["10.0.2.0/24"] }),
      pool("a", { addresses: ["10.0.0.0/24", "fd00::/120"] }),
      pool("b", { addresses: ["10.0.0.200-10.0.1.10", "fd00::80/121"] }),
    ]);
    expect(findings).toEqual([
      {
        kind: "PoolsOverlap",
        pools: ["a", "b"],
        overlap: "10.0.0.200-10.0.0.255",
        message:
          "IPAddressPools a and b both contain 10.0.0.200-10.0.0.255; remove the addresses from one of them " +
          "so each address belongs to exactly one pool",
      },
      expect.objectContaining({ kind: "PoolsOverlap", pools: ["a", "b"], overlap: "fd00::80-fd00::ff" }),
    ]);
  });

  it("finds nothing in disjoint pools or across families", () => {
    expect(
      findOverlappingPools([
        pool("a", { addresses: ["10.0.0.0/24"] }),
        pool("b", { addresses: ["10.0.1.0/24", "::a00:0/120"] }),
      ]),
    ).toEqual([]);
  });
});

describe("findNodeAddressesInPools", () => {
  it("names the node, the address and the pool", () => {
    const pools = [
      pool("lan", { addresses: ["192.168.1.0/24"] }),
      pool("v6", { addresses: ["fd00::/64"] }),
      pool("picky", { addresses: ["192.168.1.0/24"], avoidBuggyIPs: true }),
    ];
    const findings = findNodeAddressesInPools(pools, [
      { name: "node-a", addresses: ["192.168.1.10", "10.9.9.9", "FD00::0a", "not-an-ip"] },
      { name: "node-b", addresses: ["192.168.1.255"] },
    ]);
    expect(
      findings.map((f) => (f.kind === "NodeAddressInPool" ? `${f.node} ${f.address} ${f.pool}` : "")),
    ).toEqual([
      "node-a 192.168.1.10 lan",
      "node-a 192.168.1.10 picky",
      "node-a fd00::a v6",
      // picky never hands out .255, so node-b's address is only a problem in lan.
      "node-b 192.168.1.255 lan",
    ]);
    expect(findings[0]?.message).toBe(
      "IPAddressPool lan contains 192.168.1.10, an address of node node-a; exclude it from spec.addresses " +
        "(split the range around it) so no Service is given it",
    );
  });
});
