// The FRR agent's choice between sending changes straight to FRR and running frr-reload.py
// (manifests/speaker/frr/portico-frr-agent.py): only `network` statements and prefix-list entries go direct.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { renderFrrConfig } from "../../speaker/bgp/frrConfig.ts";
import { readPeers } from "../../speaker/bgp/peers.ts";
import type { AdvertisedPrefix, PathAttributes } from "../../speaker/bgp/routes.ts";

const AGENT = fileURLToPath(new URL("../../manifests/speaker/frr/portico-frr-agent.py", import.meta.url));

/** fast_changes(before, after) of the agent, run by python3 on the real script. */
function fastChanges(before: string, after: string): string | null {
  const program = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
agent = importlib.util.module_from_spec(spec); spec.loader.exec_module(agent)
before, after = json.load(sys.stdin)
print(json.dumps(agent.fast_changes(before, after)))`;
  const out = execFileSync("python3", ["-c", program, AGENT], { input: JSON.stringify([before, after]) });
  return JSON.parse(out.toString()) as string | null;
}

const peers = readPeers(
  [
    { metadata: { name: "tor-1" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.1" } },
    { metadata: { name: "tor-2" }, spec: { myASN: 64512, peerASN: 64500, peerAddress: "192.0.2.2" } },
  ],
  "portico.io",
).peers;
const plain: PathAttributes = { communities: [], largeCommunities: [] };
const to = (text: string, names: string[], attrs = plain): AdvertisedPrefix => ({
  prefix: text,
  family: "IPv4",
  peers: new Map(names.map((n) => [n, attrs] as const)),
  services: ["ns/web"],
});
const render = (prefixes: AdvertisedPrefix[], generation: number, list = peers) =>
  renderFrrConfig({ hostname: "n1", peers: list, prefixes, bfdProfiles: [], generation }).text;

test("Services coming and going: network statements sent straight to FRR", () => {
  const before = render([to("198.51.100.10/32", ["tor-1", "tor-2"])], 1);
  const after = render([to("198.51.100.11/32", ["tor-1", "tor-2"])], 2);
  expect(fastChanges(before, after)).toBe(
    [
      "router bgp 64512",
      "address-family ipv4 unicast",
      "no network 198.51.100.10/32",
      "exit-address-family",
      "exit",
      "router bgp 64512",
      "address-family ipv4 unicast",
      "network 198.51.100.11/32",
      "exit-address-family",
      "exit",
      "",
    ].join("\n"),
  );
});

test("an exception to one peer: its prefix-list entry and the network, straight", () => {
  const before = render([to("198.51.100.10/32", ["tor-1"])], 1);
  const after = render([to("198.51.100.10/32", ["tor-1"]), to("198.51.100.12/32", ["tor-1"])], 2);
  const changes = fastChanges(before, after)!;
  expect(changes).toContain("ip prefix-list portico-some-peers-v4 seq 10 permit 198.51.100.12/32");
  expect(changes).toContain("network 198.51.100.12/32");
});

test("anything else — a new peer, new attributes, the first exception — goes through frr-reload.py", () => {
  const one = render([to("198.51.100.10/32", ["tor-1", "tor-2"])], 1);
  expect(fastChanges(one, render([to("198.51.100.10/32", ["tor-1"])], 2, peers.slice(0, 1)))).toBeNull();
  const tagged = { communities: ["65000:1"], largeCommunities: [] };
  expect(fastChanges(one, render([to("198.51.100.10/32", ["tor-1", "tor-2"], tagged)], 2))).toBeNull();
  expect(fastChanges(one, render([to("198.51.100.10/32", ["tor-1"])], 2))).toBeNull();
  expect(fastChanges(one, render([to("198.51.100.10/32", ["tor-1", "tor-2"])], 2))).toBe("");
});
