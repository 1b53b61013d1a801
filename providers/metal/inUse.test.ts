// The provider and the speakers' records: traffic from the ServiceL2Status records, and an address another host
// on the LAN answered for handed out no more.
import { describe, expect, test } from "vitest";
import { intent } from "../../test/unit/support/awsIntent.ts";
import type { L2StatusFields } from "../../shared/l2status.ts";
import { IN_USE_TTL_MS, MetalProvider, type PoolObject } from "./provider.ts";

const web = { namespace: "shop", name: "web", uid: "u1" };

function world(records: L2StatusFields[] = []) {
  const pools: PoolObject[] = [{ name: "lan", spec: { addresses: ["192.0.2.0-192.0.2.2"] } }];
  let now = 1_000_000;
  const state = { records };
  const provider = new MetalProvider(
    {
      pools: () => pools,
      assignments: () => [],
      nodeAddresses: () => [],
      announcements: (namespace, name) =>
        state.records.filter((r) => r.serviceNamespace === namespace && r.serviceName === name),
    },
    () => now,
  );
  return { provider, state, advance: (ms: number) => (now += ms) };
}

const record = (over: Partial<L2StatusFields>): L2StatusFields => ({
  node: "n1",
  serviceName: "web",
  serviceNamespace: "shop",
  interfaces: [{ name: "eth0" }],
  addresses: [],
  ...over,
});

const withEndpoint = (over = {}) =>
  intent({
    service: web,
    loadBalancerClass: "portico.io/metal",
    endpoints: [{ ip: "10.0.0.1", ports: {} }],
    ...over,
  });

describe("an address another host on the LAN uses", () => {
  test("a new address found in use is let go: the Service gets the next free one, and the pool reports it", async () => {
    const { provider, state } = world();
    expect((await provider.ensure(withEndpoint())).ingress).toEqual([{ ip: "192.0.2.0", ipMode: "VIP" }]);
    state.records = [record({ inUse: [{ address: "192.0.2.0", mac: "02:00:00:00:00:99" }] })];
    const moved = await provider.ensure(withEndpoint());
    expect(moved.ingress).toEqual([{ ip: "192.0.2.1", ipMode: "VIP" }]);
    expect(moved.notices).toEqual([
      {
        type: "Warning",
        reason: "AddressInUse",
        message:
          "192.0.2.0 is in use on the LAN by 02:00:00:00:00:99, which is not a speaker: handed out 192.0.2.1 instead",
      },
    ]);
    const finding = provider.poolState().findings.find((f) => f.kind === "AddressInUse");
    expect(finding).toMatchObject({ pool: "lan", address: "192.0.2.0", mac: "02:00:00:00:00:99" });
    // Nobody else gets it either, while it is known to be in use.
    const other = await provider.ensure(intent({ service: { namespace: "shop", name: "db", uid: "u2" } }));
    expect(other.ingress).toEqual([{ ip: "192.0.2.2", ipMode: "VIP" }]);
  });

  test("an address announced already (a takeover found it in use) stays, reported", async () => {
    const { provider, state } = world();
    await provider.ensure(withEndpoint());
    state.records = [
      record({ addresses: ["192.0.2.0"], inUse: [{ address: "192.0.2.0", mac: "02:00:00:00:00:99" }] }),
    ];
    const kept = await provider.ensure(withEndpoint());
    expect(kept.ingress).toEqual([{ ip: "192.0.2.0", ipMode: "VIP" }]);
    expect(kept.notices).toEqual([]);
    expect(provider.poolState().findings.map((f) => f.kind)).toEqual(["AddressInUse"]);
  });

  test("after the time to live the address may be handed out again (and is probed again)", async () => {
    const { provider, state, advance } = world();
    await provider.ensure(withEndpoint());
    state.records = [record({ inUse: [{ address: "192.0.2.0", mac: "02:00:00:00:00:99" }] })];
    await provider.ensure(withEndpoint());
    state.records = [];
    advance(IN_USE_TTL_MS + 1);
    const later = await provider.ensure(intent({ service: { namespace: "shop", name: "db", uid: "u2" } }));
    expect(later.ingress).toEqual([{ ip: "192.0.2.0", ipMode: "VIP" }]);
    expect(provider.poolState().findings).toEqual([]);
  });
});

describe("traffic from the records", () => {
  test("waiting, then announced; without records to read nothing is said", async () => {
    const { provider, state } = world();
    expect((await provider.ensure(withEndpoint())).traffic).toMatchObject({ flowing: undefined });
    state.records = [record({ addresses: ["192.0.2.0"] })];
    expect((await provider.ensure(withEndpoint())).traffic).toMatchObject({
      flowing: true,
      reason: "Announced",
    });
    const blind = new MetalProvider({
      pools: () => [{ name: "lan", spec: { addresses: ["192.0.2.0/30"] } }],
      assignments: () => [],
      nodeAddresses: () => [],
    });
    expect((await blind.ensure(withEndpoint())).traffic).toBeUndefined();
  });
});
