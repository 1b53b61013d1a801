// The controller allocates from MetalLB's own IPAddressPools (metallb.io/v1beta1), read as they are, together
// with Portico's: one set of pools by name, MetalLB pools' status counts kept as MetalLB's CRD declares them, and
// a name defined by both kinds refused, loudly, for the Services it concerns only.
import type { V1Service } from "@kubernetes/client-node";
import { expect, expectRefused, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { createMetallbPool, installAdvertisementCrds } from "../../harness/metallb.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

const METAL = "portico.io/metal";

/** The controller as the metal overlay runs it (--metallb auto), reading MetalLB's objects in the test's namespace. */
const metal = (cluster: TestCluster) =>
  startPortico(cluster, {
    provider: "metal",
    loadBalancerClass: METAL,
    settings: { metallb: { mode: "auto", namespace: cluster.namespace } },
  });

const lb = (port = 80): V1Service["spec"] => ({
  type: "LoadBalancer",
  loadBalancerClass: METAL,
  selector: { app: "x" },
  ports: [{ name: "p", protocol: "TCP", port }],
});

async function ips(cluster: TestCluster, name: string): Promise<string[] | undefined> {
  const ingress = (await cluster.getService(name)).status?.loadBalancer?.ingress;
  return ingress?.length ? ingress.map((i) => i.ip!) : undefined;
}

test("Services get addresses from a MetalLB pool by the name they already use, and the pool's status counts them", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await installAdvertisementCrds(cluster);
  // Serving this namespace alone, as a namespace-confined controller needs to count it (seesAllOf).
  const production = await createMetallbPool(cluster, "production", {
    addresses: ["198.51.100.8/30"],
    autoAssign: false,
    serviceAllocation: { namespaces: [cluster.namespace] },
  });
  const portico = await createPool(cluster, "lan", { addresses: ["192.0.2.64/30"] });
  await metal(cluster);
  await cluster.createService("web", lb(), { "metallb.io/address-pool": "production" });
  await cluster.createService("db", lb());
  expect(await waitFor("web's address", () => ips(cluster, "web"))).toEqual(["198.51.100.8"]);
  expect(await waitFor("db's address", () => ips(cluster, "db"))).toEqual(["192.0.2.64"]);
  // MetalLB's status has integer counts (v0.15 and later): written as such, for MetalLB's pool; Portico's own
  // pool keeps its decimal strings and conditions.
  await waitFor("the MetalLB pool's counts", async () => (await production.status())?.assignedIPv4 === 1);
  expect(await production.status()).toEqual({
    assignedIPv4: 1,
    assignedIPv6: 0,
    availableIPv4: 3,
    availableIPv6: 0,
  });
  await waitFor("the Portico pool's counts", async () => (await portico.status())?.assignedIPv4 === "1");
});

test("a pool name defined by both kinds is refused for the Services it concerns, served for the others, and fixed by renaming one", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await installAdvertisementCrds(cluster);
  const ours = await createPool(cluster, "web", { addresses: ["192.0.2.72/30"], autoAssign: false });
  const theirs = await createMetallbPool(cluster, ours.name, {
    addresses: ["198.51.100.16/30"],
    autoAssign: false,
  });
  await createMetallbPool(cluster, "other", { addresses: ["198.51.100.24/30"], autoAssign: false });
  await metal(cluster);
  await cluster.createService("named", lb(), { "metallb.io/address-pool": ours.name });
  await cluster.createService("elsewhere", lb(), { "metallb.io/address-pool": "other" });
  await expectRefused(cluster, "named", {
    reason: "DuplicatePoolName",
    mentions: [
      `IPAddressPool name "${ours.name}" is defined twice`,
      `IPAddressPool ${ours.name} (portico.io)`,
      `IPAddressPool ${cluster.namespace}/${ours.name} (metallb.io)`,
      "rename or delete one of them",
    ],
  });
  expect(await ips(cluster, "named")).toBeUndefined();
  expect(await waitFor("elsewhere's address", () => ips(cluster, "elsewhere"))).toEqual(["198.51.100.24"]);
  // Portico's pool says so in its Valid condition (MetalLB's status has no conditions).
  const invalid = await waitFor("the Portico pool's Valid condition", async () => {
    const conditions = ((await ours.status())?.conditions ?? []) as { type: string; reason: string }[];
    return conditions.find((c) => c.type === "Valid" && c.reason === "DuplicateName");
  });
  expect(invalid).toMatchObject({ status: "False" });

  await theirs.rename(`${ours.name}-metallb`);
  expect(await waitFor("named's address once the name is unique", () => ips(cluster, "named"))).toEqual([
    "192.0.2.72",
  ]);
});

test("a Service holding an address keeps it when its pool's name becomes ambiguous, and says why it is not served", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await installAdvertisementCrds(cluster);
  const name = `${cluster.namespace}-shared`;
  await createMetallbPool(cluster, name, { addresses: ["198.51.100.32/30"] });
  await metal(cluster);
  await cluster.createService("held", lb());
  expect(await waitFor("held's address", () => ips(cluster, "held"))).toEqual(["198.51.100.32"]);
  // Another pool of the same name, of Portico's kind: the name no longer says which pool the address is from.
  await createPool(cluster, "shared", { addresses: ["192.0.2.80/30"] });
  await expectRefused(cluster, "held", {
    reason: "DuplicatePoolName",
    mentions: [`IPAddressPool name "${name}" is defined twice`],
  });
  expect(await ips(cluster, "held")).toEqual(["198.51.100.32"]);
});
