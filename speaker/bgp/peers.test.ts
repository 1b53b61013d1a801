import { describe, expect, test } from "vitest";
import { readBgpAdvertisements, readCommunity } from "./advertisements.ts";
import { parseDuration, peersOfNode, readBfdProfiles, readPeers } from "./peers.ts";

const peer = (spec: Record<string, unknown>, name = "tor") => ({ metadata: { name }, spec });
const base = { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.1" };

describe("BGPPeers", () => {
  test("MetalLB's fields are read with their meaning", () => {
    const { peers, problems } = readPeers(
      [
        peer({
          ...base,
          peerPort: 1179,
          localASN: 65001,
          sourceAddress: "192.0.2.10",
          routerID: "10.0.0.1",
          holdTime: "9s",
          keepaliveTime: "3s",
          connectTime: "1m",
          passwordSecret: { name: "tor-password", namespace: "portico-system" },
          bfdProfile: "fast",
          ebgpMultiHop: true,
          enableGracefulRestart: true,
          nodeSelectors: [{ matchLabels: { rack: "a" } }],
        }),
      ],
      "portico.io",
    );
    expect(problems).toEqual([]);
    expect(peers[0]).toMatchObject({
      key: "tor",
      address: "192.0.2.1",
      family: "IPv4",
      port: 1179,
      localASN: 65001,
      holdTime: 9,
      keepaliveTime: 3,
      connectTime: 60,
      passwordSecret: "tor-password",
      bfdProfile: "fast",
      ebgpMultiHop: true,
      gracefulRestart: true,
    });
    expect(peersOfNode(peers, { rack: "a" })).toHaveLength(1);
    expect(peersOfNode(peers, { rack: "b" })).toHaveLength(0);
  });

  test("MetalLB's peers are keyed by namespace, IPv6 peers are read canonically", () => {
    const { peers } = readPeers(
      [
        {
          metadata: { name: "tor", namespace: "metallb-system" },
          spec: { ...base, peerAddress: "2001:DB8::0001" },
        },
      ],
      "metallb.io",
    );
    expect(peers[0]).toMatchObject({ key: "metallb-system/tor", address: "2001:db8::1", family: "IPv6" });
  });

  test.each([
    [{ myASN: 64512, peerAddress: "192.0.2.1" }, "spec.peerASN is required"],
    [{ ...base, myASN: 0 }, "spec.myASN must be an AS number from 1 to 4294967295"],
    [{ ...base, peerAddress: "192.0.2.0/24" }, 'spec.peerAddress: "192.0.2.0/24" is a network'],
    [{ ...base, holdTime: "1s" }, "spec.holdTime must be 0 or at least 3s (RFC 4271)"],
    [{ ...base, holdTime: "soon" }, "spec.holdTime must be a duration"],
    [{ ...base, holdTime: "9s", keepaliveTime: "30s" }, "spec.keepaliveTime must not exceed spec.holdTime"],
    [{ ...base, password: "a", passwordSecret: { name: "s" } }, "exclusive"],
    [{ ...base, interface: "eth0" }, "spec.interface: unnumbered BGP is not implemented"],
    [{ ...base, vrf: "red" }, "spec.vrf: peering in a VRF is not implemented"],
    [{ ...base, dynamicASN: "external" }, "spec.dynamicASN"],
    [{ ...base, peerAsn: 1 }, "spec.peerAsn is not a BGPPeer field Portico knows"],
    [{ ...base, routerID: "2001:db8::1" }, "spec.routerID must be an IPv4 address"],
  ])("a peer that cannot be used as written is left out, saying why: %j", (spec, problem) => {
    const { peers, problems } = readPeers([peer(spec)], "portico.io");
    expect(peers).toEqual([]);
    expect(problems.join("\n")).toContain(problem);
    expect(problems[0]).toMatch(/^BGPPeer tor \(portico\.io\) not used: /);
  });

  test("durations", () => {
    expect(parseDuration("90s")).toBe(90);
    expect(parseDuration("1m30s")).toBe(90);
    expect(parseDuration("1h")).toBe(3600);
    expect(parseDuration("1500ms")).toBeUndefined();
    expect(parseDuration("2000ms")).toBe(2);
    expect(parseDuration("")).toBeUndefined();
    expect(parseDuration("5")).toBeUndefined();
  });
});

describe("BFDProfiles", () => {
  test("read with MetalLB's fields; out-of-range values leave the profile out", () => {
    const { profiles, problems } = readBfdProfiles(
      [
        {
          metadata: { name: "fast" },
          spec: { receiveInterval: 100, transmitInterval: 100, detectMultiplier: 3, echoMode: true },
        },
        { metadata: { name: "broken" }, spec: { receiveInterval: 5 } },
      ],
      "portico.io",
    );
    expect(profiles).toEqual([
      {
        name: "fast",
        receiveInterval: 100,
        transmitInterval: 100,
        detectMultiplier: 3,
        echoMode: true,
        passiveMode: false,
      },
    ]);
    expect(problems).toEqual([
      "BFDProfile broken (portico.io) not used: spec.receiveInterval must be an integer from 10 to 60000",
    ]);
  });
});

describe("BGPAdvertisements", () => {
  test("defaults and fields", () => {
    const { ads, problems } = readBgpAdvertisements(
      [
        {
          metadata: { name: "all" },
          spec: { communities: ["65000:1", "large:1:2:3", "NO-EXPORT"], localPref: 100 },
        },
      ],
      "portico.io",
    );
    expect(problems).toEqual([]);
    expect(ads[0]).toMatchObject({
      aggregationLength: 32,
      aggregationLengthV6: 128,
      communities: ["65000:1", "no-export"],
      largeCommunities: ["1:2:3"],
      localPref: 100,
      peers: [],
    });
  });

  test.each([
    [{ aggregationLength: 33 }, "spec.aggregationLength must be an integer from 0 to 32"],
    [{ communities: ["my-community"] }, "named Community objects are not implemented"],
    [{ communities: ["70000:1"] }, "each half of a community is at most 65535"],
    [{ localPref: -1 }, "spec.localPref must be an integer"],
    [{ peers: [3] }, "spec.peers[0] is not a name"],
    [{ ipAddressPool: ["a"] }, "spec.ipAddressPool is not a BGPAdvertisement field Portico knows"],
  ])("an advertisement it cannot honour is left out, saying why: %j", (spec, problem) => {
    const { ads, problems } = readBgpAdvertisements([{ metadata: { name: "x" }, spec }], "portico.io");
    expect(ads).toEqual([]);
    expect(problems.join("\n")).toContain(problem);
  });

  test("communities", () => {
    expect(readCommunity("65535:65281")).toEqual({ standard: "65535:65281" });
    expect(readCommunity("local-as")).toEqual({ standard: "local-AS" });
    expect(readCommunity("large:4294967295:0:1")).toEqual({ large: "4294967295:0:1" });
    expect(readCommunity("large:4294967296:0:1").problem).toContain("at most 4294967295");
  });
});
