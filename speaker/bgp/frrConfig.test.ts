import { describe, expect, test } from "vitest";
import { renderFrrConfig, sessionTimers, type FrrInput } from "./frrConfig.ts";
import { readBfdProfiles, readPeers } from "./peers.ts";
import type { AdvertisedPrefix, PathAttributes } from "./routes.ts";

const peers = readPeers(
  [
    {
      metadata: { name: "tor-1" },
      spec: {
        myASN: 64512,
        peerASN: 64500,
        peerAddress: "192.0.2.1",
        holdTime: "9s",
        bfdProfile: "fast",
        passwordSecret: { name: "s" },
      },
    },
    {
      metadata: { name: "tor-6" },
      spec: { myASN: 64512, peerASN: 64500, peerAddress: "2001:db8::1", peerPort: 1179 },
    },
  ],
  "portico.io",
).peers;
const profiles = readBfdProfiles(
  [
    {
      metadata: { name: "fast" },
      spec: { receiveInterval: 100, transmitInterval: 100, detectMultiplier: 3 },
    },
  ],
  "portico.io",
).profiles;

const plain: PathAttributes = { communities: [], largeCommunities: [] };
function prefix(text: string, to: Record<string, PathAttributes>): AdvertisedPrefix {
  return {
    prefix: text,
    family: text.includes(":") ? "IPv6" : "IPv4",
    peers: new Map(Object.entries(to)),
    services: ["ns/web"],
  };
}

function render(overrides: Partial<FrrInput> = {}) {
  return renderFrrConfig({
    hostname: "node-1",
    peers: [{ ...peers[0]!, resolvedPassword: "s3cret" }, peers[1]!],
    prefixes: [
      prefix("198.51.100.10/32", { "tor-1": plain }),
      prefix("198.51.100.11/32", {
        "tor-1": { communities: ["65000:1"], largeCommunities: ["1:2:3"], localPref: 150 },
      }),
      prefix("2001:db8:5::10/128", { "tor-6": plain }),
    ],
    bfdProfiles: profiles,
    generation: 7,
    ...overrides,
  });
}

describe("FRR configuration", () => {
  test("one router, each peer's session settings, every prefix as a network of its family", () => {
    const { text, problems, peers: configured } = render();
    expect(problems).toEqual([]);
    expect(configured).toEqual(["tor-1", "tor-6"]);
    expect(text).toContain("! portico generation 7\n");
    expect(text).toContain(
      [
        "router bgp 64512",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        " no bgp default ipv4-unicast",
        " neighbor 192.0.2.1 remote-as 64500",
        " neighbor 192.0.2.1 timers 3 9",
        " neighbor 192.0.2.1 password s3cret",
        " neighbor 192.0.2.1 bfd",
        " neighbor 192.0.2.1 bfd profile fast",
        " neighbor 2001:db8::1 remote-as 64500",
        " neighbor 2001:db8::1 port 1179",
        " address-family ipv4 unicast",
        "  network 198.51.100.10/32",
        "  network 198.51.100.11/32 route-map portico-set-fb24e7af7c",
        "  neighbor 192.0.2.1 activate",
      ].join("\n"),
    );
    expect(text).toContain(" address-family ipv6 unicast\n  network 2001:db8:5::10/128\n");
    expect(text).toContain(
      "bfd\n profile fast\n  receive-interval 100\n  transmit-interval 100\n  detect-multiplier 3\n exit\nexit",
    );
  });

  test("attributes every peer gets alike ride on the prefix's origin; prefix-lists only for the exceptions", () => {
    const tor2 = readPeers(
      [{ metadata: { name: "tor-2" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.2" } }],
      "portico.io",
    ).peers[0]!;
    const tagged: PathAttributes = { communities: ["65000:1"], largeCommunities: ["1:2:3"], localPref: 150 };
    const { text } = render({
      peers: [peers[0]!, tor2, peers[1]!],
      prefixes: [
        prefix("198.51.100.10/32", { "tor-1": plain, "tor-2": plain }),
        prefix("198.51.100.11/32", { "tor-1": tagged, "tor-2": tagged }),
        prefix("198.51.100.13/32", { "tor-1": plain }),
        prefix("198.51.100.14/32", { "tor-1": tagged, "tor-2": { ...plain, communities: ["no-export"] } }),
        prefix("2001:db8:5::10/128", { "tor-6": plain }),
      ],
    });
    const origin = /network 198\.51\.100\.11\/32 route-map (portico-set-[0-9a-f]{10})\n/.exec(text)?.[1];
    expect(origin).toBeDefined();
    expect(text).toContain(
      `route-map ${origin} permit 10\n set local-preference 150\n set community 65000:1\n set large-community 1:2:3\nexit`,
    );
    expect(text).toContain("  network 198.51.100.10/32\n");
    expect(text).toContain("  network 198.51.100.13/32\n");
    expect(text).toContain("  network 198.51.100.14/32\n");
    // The exceptions: listed once, permitted with their attributes to the peers that get them, denied to the rest.
    expect(text).toContain(
      "ip prefix-list portico-some-peers-v4 seq 5 permit 198.51.100.13/32\nip prefix-list portico-some-peers-v4 seq 10 permit 198.51.100.14/32\n",
    );
    expect(text).toContain(
      [
        "ip prefix-list portico-192-0-2-1-1 seq 5 permit 198.51.100.14/32",
        "route-map portico-192-0-2-1-out permit 10",
        " match ip address prefix-list portico-192-0-2-1-1",
        " set local-preference 150",
        " set community 65000:1 additive",
        " set large-community 1:2:3 additive",
        "exit",
        "!",
        "ip prefix-list portico-192-0-2-1-2 seq 5 permit 198.51.100.13/32",
        "route-map portico-192-0-2-1-out permit 20",
        " match ip address prefix-list portico-192-0-2-1-2",
        "exit",
        "!",
        "route-map portico-192-0-2-1-out deny 65000",
        " match ip address prefix-list portico-some-peers-v4",
        "exit",
        "!",
        "route-map portico-192-0-2-1-out permit 65535",
      ].join("\n"),
    );
    expect(text).toContain(
      "route-map portico-192-0-2-2-out permit 10\n match ip address prefix-list portico-192-0-2-2-1\n set community no-export additive\n",
    );
    expect(text).not.toMatch(/portico-192-0-2-2-\d seq \d+ permit 198\.51\.100\.13/);
    expect(text).toContain("route-map portico-192-0-2-1-in deny 10\n");
    // The IPv6 peer has no exceptions of its family: everything of its family goes out.
    expect(text).toContain("route-map portico-2001-db8--1-out permit 65535");
    expect(text).not.toContain("route-map portico-2001-db8--1-out deny");
    expect(text).toMatch(
      /address-family ipv6 unicast\n {2}network 2001:db8:5::10\/128\n {2}neighbor 2001:db8::1 activate\n/,
    );
    expect(text).not.toMatch(/address-family ipv4 unicast\n( {2}.*\n)* {2}neighbor 2001:db8::1 activate/);
  });

  test("a peer restarting gracefully: its session says so, and the router keeps its forwarding state", () => {
    const graceful = { ...peers[1]!, gracefulRestart: true };
    const { text } = render({ peers: [peers[0]!, graceful] });
    expect(text).toContain(" bgp graceful-restart preserve-fw-state\n");
    expect(text).toContain(" neighbor 2001:db8::1 graceful-restart\n");
    expect(text).not.toContain(" neighbor 192.0.2.1 graceful-restart");
    expect(render().text).not.toContain("graceful-restart");
  });

  test("the same input renders the same text; a new prefix adds lines without changing the others", () => {
    expect(render().text).toBe(render().text);
    const before = render().text.split("\n");
    const after = render({
      prefixes: [
        prefix("198.51.100.10/32", { "tor-1": plain }),
        prefix("198.51.100.11/32", {
          "tor-1": { communities: ["65000:1"], largeCommunities: ["1:2:3"], localPref: 150 },
        }),
        prefix("198.51.100.12/32", { "tor-1": plain }),
        prefix("2001:db8:5::10/128", { "tor-6": plain }),
      ],
    }).text.split("\n");
    const removed = before.filter((line) => !after.includes(line));
    expect(removed).toEqual([]);
    expect(after.filter((line) => !before.includes(line))).toEqual(["  network 198.51.100.12/32"]);
  });

  test("a peer with another myASN, a duplicate address or a missing BFD profile is said", () => {
    const other = readPeers(
      [
        { metadata: { name: "z-other" }, spec: { myASN: 65000, peerASN: 1, peerAddress: "192.0.2.9" } },
        { metadata: { name: "z-dup" }, spec: { myASN: 64512, peerASN: 1, peerAddress: "192.0.2.1" } },
      ],
      "portico.io",
    ).peers;
    const { problems, peers: configured, text } = render({ peers: [...peers, ...other], bfdProfiles: [] });
    expect(configured).toEqual(["tor-1", "tor-6"]);
    expect(problems).toEqual([
      "BGPPeer z-other: myASN 65000 differs from 64512 of BGPPeer tor-1; a node speaks BGP as one AS, so this peer is left out (give every BGPPeer of a node the same myASN, or use localASN)",
      "BGPPeer z-dup: another BGPPeer of this node already peers with 192.0.2.1; left out",
      "BGPPeer tor-1: bfdProfile fast does not exist; the session runs without BFD until it does",
    ]);
    expect(text).not.toContain("bfd profile");
  });

  test("no peers: no router at all, so FRR closes every session and withdraws everything", () => {
    const { text } = render({ peers: [], prefixes: [] });
    expect(text).not.toContain("router bgp");
    expect(text).toContain("hostname node-1");
  });

  test("timers: keepalive a third of the hold time unless given, hold three keepalives unless given", () => {
    expect(sessionTimers({})).toBeUndefined();
    expect(sessionTimers({ holdTime: 90 })).toEqual({ keepalive: 30, hold: 90 });
    expect(sessionTimers({ keepaliveTime: 10 })).toEqual({ keepalive: 10, hold: 30 });
    expect(sessionTimers({ holdTime: 0 })).toEqual({ keepalive: 0, hold: 0 });
  });
});
