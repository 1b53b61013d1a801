// The bad-input corpus, bare metal: every request the allocator cannot honour is refused with a Warning Event
// and a False condition naming the field and the fix; the Service gets no address; the others keep theirs.
import type { V1Service } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { startPortico } from "../../harness/controller.ts";
import { expectRefused, TestCluster, waitFor } from "../../harness/index.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import type { Case } from "./corpus.ts";

const METAL = "portico.io/metal";
type Spec = NonNullable<V1Service["spec"]>;

const CASES: Case[] = [
  {
    name: "a requested address outside every pool",
    spec: { loadBalancerIP: "198.51.100.7" },
    reason: "AddressNotInAnyPool",
    mentions: ["spec.loadBalancerIP", "198.51.100.7"],
  },
  {
    name: "a requested address another Service holds",
    annotations: { "metallb.io/loadBalancerIPs": "192.0.2.200" },
    reason: "AddressInUse",
    mentions: ["metallb.io/loadBalancerIPs", "192.0.2.200"],
  },
  {
    name: "a requested address that is not an address",
    annotations: { "portico.io/loadBalancerIPs": "192.0.2.999" },
    reason: "InvalidRequestedAddress",
    mentions: ["portico.io/loadBalancerIPs"],
  },
  {
    name: "two requested addresses of one family",
    annotations: { "metallb.io/loadBalancerIPs": "192.0.2.201,192.0.2.202" },
    reason: "InvalidRequestedAddress",
    mentions: ["metallb.io/loadBalancerIPs"],
  },
  {
    name: "spec.loadBalancerIP and the annotation disagreeing",
    spec: { loadBalancerIP: "192.0.2.203" },
    annotations: { "metallb.io/loadBalancerIPs": "192.0.2.204" },
    reason: "ConflictingAnnotations",
    mentions: ["spec.loadBalancerIP", "metallb.io/loadBalancerIPs"],
  },
  {
    name: "a pool that does not exist",
    annotations: { "metallb.io/address-pool": "nowhere" },
    reason: "PoolNotFound",
    mentions: ["metallb.io/address-pool", "nowhere"],
  },
  {
    name: "a pool whose selector does not admit the Service",
    annotations: { "metallb.io/address-pool": "POOL:locked" },
    reason: "PoolDoesNotAllowService",
    mentions: ["metallb.io/address-pool"],
  },
  {
    name: "an exhausted pool",
    annotations: { "metallb.io/address-pool": "POOL:one" },
    reason: "PoolExhausted",
    mentions: ["POOL:one"],
  },
  {
    name: "a sharing key that differs from the holder's",
    annotations: { "metallb.io/loadBalancerIPs": "192.0.2.210", "metallb.io/allow-shared-ip": "other" },
    reason: "SharingKeyMismatch",
    mentions: ["allow-shared-ip", '"web"'],
  },
  {
    name: "a shared address whose port is taken",
    annotations: { "metallb.io/loadBalancerIPs": "192.0.2.210", "metallb.io/allow-shared-ip": "web" },
    reason: "PortConflict",
    mentions: ["TCP/80"],
  },
  {
    name: "RequireDualStack with no IPv6 in any pool",
    spec: { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv4", "IPv6"] },
    annotations: { "metallb.io/address-pool": "POOL:v4only" },
    reason: "FamilyUnavailable",
    mentions: ["IPv6"],
  },
];

describe("bad input, bare metal", () => {
  let cluster: TestCluster;
  const pools = new Map<string, string>();
  const lb = (spec: Partial<Spec> = {}): V1Service["spec"] => ({
    type: "LoadBalancer",
    loadBalancerClass: METAL,
    selector: { app: "x" },
    ports: [{ name: "http", port: 80, protocol: "TCP" }],
    ...spec,
  });
  const ips = async (name: string) =>
    (await cluster.getService(name)).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];

  beforeAll(async () => {
    cluster = await TestCluster.create(inject("kubeconfig"), "bad-input-metal");
    await installPoolCrd(cluster);
    pools.set("main", (await createPool(cluster, "main", { addresses: ["192.0.2.192/27"] })).name);
    pools.set(
      "one",
      (await createPool(cluster, "one", { addresses: ["192.0.2.240/32"], autoAssign: false })).name,
    );
    pools.set(
      "locked",
      (
        await createPool(cluster, "locked", {
          addresses: ["192.0.2.248/30"],
          autoAssign: false,
          serviceAllocation: { namespaces: ["someone-else"] },
        })
      ).name,
    );
    pools.set(
      "v4only",
      (await createPool(cluster, "v4only", { addresses: ["192.0.2.252/31"], autoAssign: false })).name,
    );
    await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL });
    await cluster.createService("holder", lb({ ports: [{ name: "http", port: 80, protocol: "TCP" }] }), {
      "metallb.io/loadBalancerIPs": "192.0.2.200",
    });
    await cluster.createService("shared", lb(), {
      "metallb.io/loadBalancerIPs": "192.0.2.210",
      "metallb.io/allow-shared-ip": "web",
    });
    await cluster.createService("first-of-one", lb(), { "metallb.io/address-pool": pools.get("one")! });
    for (const n of ["holder", "shared", "first-of-one"])
      await waitFor(`${n}'s address`, async () => (await ips(n)).length > 0);
  });
  afterAll(async () => {
    await cluster.cleanup();
  });

  test.for(CASES.map((c, i) => [c.name, c, i] as const))("%s", async ([, c, i]) => {
    const name = `bad-${i}`;
    const resolve = (text: string) => text.replace(/POOL:(\w+)/, (_, p: string) => pools.get(p)!);
    const annotations = Object.fromEntries(
      Object.entries(c.annotations ?? {}).map(([k, v]) => [k, resolve(v)]),
    );
    await cluster.createService(name, lb(c.spec), annotations);
    await expectRefused(cluster, name, { reason: c.reason, mentions: c.mentions.map(resolve) });
    expect(await ips(name)).toEqual([]);
    expect(await ips("holder")).toEqual(["192.0.2.200"]);
    expect(await ips("shared")).toEqual(["192.0.2.210"]);
  });
});
