// The BGP mode's CRDs of the metal overlay (BGPPeer, BGPAdvertisement, BFDProfile), installed on the real
// apiserver: the examples (manifests/examples/bgp*.yaml) and MetalLB-shaped objects are accepted, and
// malformed ones are refused by the apiserver itself, naming the field and what is wrong, before any speaker
// sees them. Created as dry runs with strict field validation, as `kubectl apply` sends them: validated in
// full, stored never (the objects are cluster-wide and tests run in parallel).
import { CustomObjectsApi, loadAllYaml, type KubernetesObject } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test, type TestCluster } from "../../harness/index.ts";
import { apiError, installCrds, MANIFESTS, renderOverlay } from "../../harness/manifests.ts";

const PLURALS: Record<string, string> = {
  BGPPeer: "bgppeers",
  BGPAdvertisement: "bgpadvertisements",
  BFDProfile: "bfdprofiles",
};

interface BgpObject extends KubernetesObject {
  spec?: Record<string, unknown>;
}

async function api(cluster: TestCluster): Promise<CustomObjectsApi> {
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  return cluster.kubeConfig.makeApiClient(CustomObjectsApi);
}

async function tryCreate(
  custom: CustomObjectsApi,
  kind: string,
  spec: unknown,
): Promise<{ ok: true; object: BgpObject } | { ok: false; code: number | undefined; message: string }> {
  const body = {
    apiVersion: "portico.io/v1alpha1",
    kind,
    metadata: { name: `${kind.toLowerCase()}-${randomBytes(4).toString("hex")}` },
    spec,
  };
  try {
    const object = (await custom.createClusterCustomObject({
      group: "portico.io",
      version: "v1alpha1",
      plural: PLURALS[kind]!,
      body,
      dryRun: "All",
      fieldValidation: "Strict",
    })) as BgpObject;
    return { ok: true, object };
  } catch (err) {
    return { ok: false, ...apiError(err) };
  }
}

const PEER = { myASN: 64512, peerASN: 64500, peerAddress: "10.0.1.1" };

test("the examples, and MetalLB-shaped peers, advertisements and BFD profiles, are accepted", async ({
  cluster,
}) => {
  const custom = await api(cluster);
  const examples = ["bgppeer.yaml", "bgpadvertisement.yaml"].flatMap(
    (file) => loadAllYaml(readFileSync(join(MANIFESTS, "examples", file), "utf8")) as BgpObject[],
  );
  expect(examples.map((e) => e.kind).sort()).toEqual([
    "BFDProfile",
    "BGPAdvertisement",
    "BGPAdvertisement",
    "BGPPeer",
    "BGPPeer",
  ]);
  for (const example of examples) {
    const created = await tryCreate(custom, example.kind!, example.spec);
    expect(created, `${example.kind} ${example.metadata!.name}`).toMatchObject({ ok: true });
  }

  // Every field MetalLB's BGPPeer v1beta2 has that Portico honours, IPv6 and a password in the clear.
  const peer = await tryCreate(custom, "BGPPeer", {
    myASN: 4200000000,
    peerASN: 4200000001,
    peerAddress: "2001:db8::1",
    peerPort: 1179,
    localASN: 64999,
    sourceAddress: "2001:db8::10",
    routerID: "192.0.2.10",
    holdTime: "9s",
    keepaliveTime: "3s",
    connectTime: "5s",
    password: "s3cret",
    bfdProfile: "fast",
    ebgpMultiHop: true,
    enableGracefulRestart: true,
    nodeSelectors: [{ matchExpressions: [{ key: "rack", operator: "In", values: ["a", "b"] }] }],
  });
  expect(peer).toMatchObject({ ok: true });
  const advertisement = await tryCreate(custom, "BGPAdvertisement", {
    ipAddressPoolSelectors: [{ matchLabels: { bgp: "yes" } }],
    nodeSelectors: [{ matchLabels: { edge: "true" } }],
    aggregationLength: 24,
    aggregationLengthV6: 64,
    localPref: 150,
    communities: ["65000:100", "large:64512:1:2", "NO-EXPORT", "blackhole"],
  });
  expect(advertisement).toMatchObject({ ok: true });
  const profile = await tryCreate(custom, "BFDProfile", {
    receiveInterval: 300,
    transmitInterval: 300,
    detectMultiplier: 3,
    echoInterval: 50,
    echoMode: false,
    passiveMode: true,
    minimumTtl: 254,
  });
  expect(profile).toMatchObject({ ok: true });
});

test("malformed objects are refused with a message naming the field and what is wrong", async ({
  cluster,
}) => {
  const custom = await api(cluster);
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    [
      "a peer address with a prefix length",
      "BGPPeer",
      { ...PEER, peerAddress: "10.0.1.1/32" },
      /spec\.peerAddress: Invalid value: "string": peerAddress must be a single IP address, without a prefix length/,
    ],
    [
      "a peer address that is a name",
      "BGPPeer",
      { ...PEER, peerAddress: "tor-a.example.com" },
      /spec\.peerAddress: .*peerAddress must be a single IP address/,
    ],
    [
      "both a password and a passwordSecret",
      "BGPPeer",
      { ...PEER, password: "s3cret", passwordSecret: { name: "tor-password" } },
      /spec: Invalid value: "object": password and passwordSecret are exclusive; give one/,
    ],
    [
      "an AS number of 0",
      "BGPPeer",
      { ...PEER, myASN: 0 },
      /spec\.myASN: Invalid value: 0: spec\.myASN in body should be greater than or equal to 1/,
    ],
    [
      "a hold time without a unit",
      "BGPPeer",
      { ...PEER, holdTime: "90" },
      /spec\.holdTime: Invalid value: "90": spec\.holdTime in body should match/,
    ],
    [
      "a router ID that is IPv6",
      "BGPPeer",
      { ...PEER, routerID: "2001:db8::1" },
      /spec\.routerID: .*routerID must be an IPv4 address/,
    ],
    [
      "MetalLB's vrf, which Portico does not implement (strict field validation)",
      "BGPPeer",
      { ...PEER, vrf: "red" },
      /unknown field "spec\.vrf"/,
    ],
    [
      "MetalLB's dynamicASN, which Portico does not implement",
      "BGPPeer",
      { ...PEER, dynamicASN: "external" },
      /unknown field "spec\.dynamicASN"/,
    ],
    [
      "a community that is one number",
      "BGPAdvertisement",
      { communities: ["65000"] },
      /spec\.communities\[0\]: Invalid value: "string": a community is ASN:VALUE \(65000:100\), large:ASN:X:Y, or a well-known name; named Community objects are not implemented/,
    ],
    [
      "a named Community object",
      "BGPAdvertisement",
      { communities: ["my-community"] },
      /spec\.communities\[0\]: .*named Community objects are not implemented/,
    ],
    [
      "an IPv4 aggregation length beyond /32",
      "BGPAdvertisement",
      { aggregationLength: 33 },
      /spec\.aggregationLength: Invalid value: 33: spec\.aggregationLength in body should be less than or equal to 32/,
    ],
    [
      "an IPv6 aggregation length beyond /128",
      "BGPAdvertisement",
      { aggregationLengthV6: 129 },
      /spec\.aggregationLengthV6: Invalid value: 129: spec\.aggregationLengthV6 in body should be less than or equal to 128/,
    ],
    [
      "a negative local preference",
      "BGPAdvertisement",
      { localPref: -1 },
      /spec\.localPref: Invalid value: -1: spec\.localPref in body should be greater than or equal to 0/,
    ],
    [
      "a node selector expression In without values",
      "BGPAdvertisement",
      { nodeSelectors: [{ matchExpressions: [{ key: "rack", operator: "In" }] }] },
      /values must list at least one value for In and NotIn/,
    ],
    [
      "a BFD detect multiplier of 1",
      "BFDProfile",
      { detectMultiplier: 1 },
      /spec\.detectMultiplier: Invalid value: 1: spec\.detectMultiplier in body should be greater than or equal to 2/,
    ],
    [
      "a BFD interval under 10 ms",
      "BFDProfile",
      { receiveInterval: 5 },
      /spec\.receiveInterval: Invalid value: 5: spec\.receiveInterval in body should be greater than or equal to 10/,
    ],
  ];
  for (const [what, kind, spec, message] of cases) {
    const refused = await tryCreate(custom, kind, spec);
    expect(refused.ok, what).toBe(false);
    if (refused.ok) continue;
    expect(refused.message, what).toMatch(message);
    // Schema and CEL refusals are 422 Invalid; an unknown field under strict validation is 400 BadRequest.
    expect(refused.code, what).toBe(/unknown field/.test(message.source) ? 400 : 422);
  }
});
