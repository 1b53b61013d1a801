// Moving over from MetalLB without renumbering: a Service that already has an address in its status (MetalLB's,
// or written by hand) keeps it when a pool has it free, counted from the first reconcile so no newcomer takes it,
// and across a pool edit and a controller restart; one in no pool is refused, saying so, and left as it is.
import { setTimeout as sleep } from "node:timers/promises";
import type { V1Service } from "@kubernetes/client-node";
import {
  expect,
  expectRefused,
  mergePatch,
  test,
  total,
  waitFor,
  type TestCluster,
} from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

/** MetalLB's class, which Portico is started to take over (besides the unclassed Services, as the default). */
const METALLB_CLASS = "example.com/metallb";

const metal = (cluster: TestCluster) =>
  startPortico(cluster, { provider: "metal", loadBalancerClass: METALLB_CLASS, defaultForUnclassed: true });

const lb = (cls?: string): V1Service["spec"] => ({
  type: "LoadBalancer",
  ...(cls ? { loadBalancerClass: cls } : {}),
  selector: { app: "x" },
  ports: [{ name: "p", protocol: "TCP", port: 80 }],
});

/** What MetalLB leaves behind: the address in the Service's status, and nothing else of Portico's. */
async function givenByMetallb(cluster: TestCluster, name: string, ip: string): Promise<void> {
  await cluster.core.patchNamespacedServiceStatus(
    { name, namespace: cluster.namespace, body: { status: { loadBalancer: { ingress: [{ ip }] } } } },
    mergePatch,
  );
}

async function ips(cluster: TestCluster, name: string): Promise<string[] | undefined> {
  const ingress = (await cluster.getService(name)).status?.loadBalancer?.ingress;
  return ingress?.length ? ingress.map((i) => i.ip!) : undefined;
}

async function events(cluster: TestCluster, name: string): Promise<string[]> {
  const list = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => `${e.reason}: ${e.message}`);
}

const ready = async (cluster: TestCluster, name: string) =>
  (await cluster.getService(name)).status?.conditions?.find((c) => c.type === "portico.io/LoadBalancerReady")
    ?.status === "True";

test("addresses MetalLB gave are kept across the move, a pool edit and a restart; one in no pool is refused and left as it is", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "lan", { addresses: ["198.18.5.4/30"] });
  // The newcomer is the oldest: served first, it would get the pool's first address if that were not counted.
  await cluster.createService("newcomer", lb());
  await cluster.createService("unclassed", lb());
  await cluster.createService("classed", lb(METALLB_CLASS));
  await cluster.createService("stray", lb());
  await givenByMetallb(cluster, "unclassed", "198.18.5.4");
  await givenByMetallb(cluster, "classed", "198.18.5.5");
  await givenByMetallb(cluster, "stray", "198.18.9.9");

  const first = await metal(cluster);
  await waitFor("the moved Services to be served", async () =>
    (await ready(cluster, "unclassed")) && (await ready(cluster, "classed")) ? true : undefined,
  );
  expect(await ips(cluster, "unclassed")).toEqual(["198.18.5.4"]);
  expect(await ips(cluster, "classed")).toEqual(["198.18.5.5"]);
  expect(await waitFor("newcomer's address", () => ips(cluster, "newcomer"))).toEqual(["198.18.5.6"]);
  // The status already had an address, so this is an update of it, saying it was kept.
  expect(await events(cluster, "unclassed")).toContain(
    `UpdatedLoadBalancer: kept 198.18.5.4 (in pool ${pool.name}), the address the Service had before Portico`,
  );
  await expectRefused(cluster, "stray", {
    reason: "StatusAddressNotInPool",
    mentions: [
      "status.loadBalancer.ingress: 198.18.9.9",
      "in none of Portico's IPAddressPools",
      "add it to an IPAddressPool to keep it",
    ],
  });
  expect(await ips(cluster, "stray")).toEqual(["198.18.9.9"]);
  await waitFor("the pool to count the three addresses", async () =>
    (await pool.status())?.assignedIPv4 === "3" ? true : undefined,
  );

  // A pool edit renumbers nothing, and brings the stray address in: now it is kept too.
  await pool.replace({ addresses: ["198.18.5.4/30", "198.18.9.9/32"] });
  await waitFor("stray to be served once its address is in a pool", () => ready(cluster, "stray"));
  expect(await ips(cluster, "stray")).toEqual(["198.18.9.9"]);
  await waitFor("the pool to count four", async () =>
    (await pool.status())?.assignedIPv4 === "4" ? true : undefined,
  );

  // A restart reads every address back; a Service arriving meanwhile gets the one address left.
  await first.stop();
  await cluster.createService("late", lb());
  const second = await metal(cluster);
  expect(await waitFor("late's address", () => ips(cluster, "late"))).toEqual(["198.18.5.7"]);
  // The restarted controller has looked at each of the five Services (it starts with all of them queued).
  await waitFor("five reconciles", async () => (await total(second.metrics.reconciles)) >= 5);
  expect(await ips(cluster, "unclassed")).toEqual(["198.18.5.4"]);
  expect(await ips(cluster, "classed")).toEqual(["198.18.5.5"]);
  expect(await ips(cluster, "newcomer")).toEqual(["198.18.5.6"]);
  expect(await ips(cluster, "stray")).toEqual(["198.18.9.9"]);
  await waitFor("the pool to count five", async () =>
    (await pool.status())?.assignedIPv4 === "5" ? true : undefined,
  );
});

test("an address another Service holds is refused, naming the holder, and left in the status", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["198.18.6.4/30"] });
  await cluster.createService("owner", lb());
  // Creation times have whole seconds: the older Service's address is the one read back first.
  await sleep(1100);
  await cluster.createService("copy", lb());
  await givenByMetallb(cluster, "owner", "198.18.6.5");
  await givenByMetallb(cluster, "copy", "198.18.6.5");
  await metal(cluster);
  await expectRefused(cluster, "copy", {
    reason: "StatusAddressTaken",
    mentions: [`198.18.6.5 is held by Service ${cluster.namespace}/owner`, "spec.loadBalancerIP"],
  });
  expect(await ips(cluster, "owner")).toEqual(["198.18.6.5"]);
  expect(await ips(cluster, "copy")).toEqual(["198.18.6.5"]);
  // Asking for another address is how the user settles it.
  await cluster.core.patchNamespacedService(
    { name: "copy", namespace: cluster.namespace, body: { spec: { loadBalancerIP: "198.18.6.6" } } },
    mergePatch,
  );
  await waitFor("copy to get the address it asked for", async () =>
    (await ips(cluster, "copy"))?.[0] === "198.18.6.6" ? true : undefined,
  );
});
