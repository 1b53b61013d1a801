// Bare-metal allocation by the controller: addresses from IPAddressPools into Service status, with the
// requests, sharing, exhaustion and restarts MetalLB users know.
import { setTimeout as sleep } from "node:timers/promises";
import { CustomObjectsApi, type V1Service } from "@kubernetes/client-node";
import { expect, test, total, waitFor, waitForNotReady, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { createPool, installPoolCrd, type TestPool } from "../../harness/pools.ts";

const METAL = "portico.io/metal";
const metal = (cluster: TestCluster, over: Partial<Parameters<typeof startPortico>[1]> = {}) =>
  startPortico(cluster, { provider: "metal", loadBalancerClass: METAL, ...over });

function lb(
  ports: { port: number; protocol?: string }[] = [{ port: 80 }],
  spec: Partial<NonNullable<V1Service["spec"]>> = {},
): V1Service["spec"] {
  return {
    type: "LoadBalancer",
    loadBalancerClass: METAL,
    selector: { app: "x" },
    ports: ports.map((p, i) => ({ name: `p${i}`, protocol: "TCP", ...p })),
    ...spec,
  };
}

async function ips(cluster: TestCluster, name: string): Promise<string[] | undefined> {
  const ingress = (await cluster.getService(name)).status?.loadBalancer?.ingress;
  return ingress?.length ? ingress.map((i) => i.ip!) : undefined;
}

test("Services get addresses from the pool in order, with ipMode VIP, and the pool counts them", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "lan", { addresses: ["192.0.2.0/30"] });
  const theirs = await createPool(cluster, "theirs", {
    addresses: ["203.0.113.240/30"],
    serviceAllocation: { namespaces: [`${cluster.namespace}-elsewhere`] },
  });
  await metal(cluster);
  await cluster.createService("a", lb());
  expect(await waitFor("a's address", () => ips(cluster, "a"))).toEqual(["192.0.2.0"]);
  await cluster.createService("b", lb());
  expect(await waitFor("b's address", () => ips(cluster, "b"))).toEqual(["192.0.2.1"]);
  expect((await cluster.getService("a")).status!.loadBalancer!.ingress![0]!.ipMode).toBe("VIP");
  await waitFor("the pool's status", async () => (await pool.status())?.assignedIPv4 === "2");
  const status = (await pool.status()) as {
    assignedIPv4: string;
    availableIPv4: string;
    conditions: { type: string; status: string }[];
  };
  expect(status).toMatchObject({ assignedIPv4: "2", availableIPv4: "2" });
  expect(status.conditions.find((c) => c.type === "Valid")?.status).toBe("True");
  // A pool serving another namespace is not this namespace-confined controller's to count: it writes its own
  // pool's status again (after the change below) but never that one's.
  expect(await theirs.status()).toBeUndefined();
  await cluster.core.deleteNamespacedService({ name: "b", namespace: cluster.namespace });
  await waitFor("the pool's status after b left", async () => (await pool.status())?.assignedIPv4 === "1");
  expect(await theirs.status()).toBeUndefined();
});

test("a requested address is honoured; one outside every pool or already taken is refused, naming the field", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.16-192.0.2.20"] });
  await metal(cluster);
  await cluster.createService("wants", lb(undefined, { loadBalancerIP: "192.0.2.19" }));
  expect(await waitFor("the requested address", () => ips(cluster, "wants"))).toEqual(["192.0.2.19"]);
  await cluster.createService("metallb", lb(), { "metallb.io/loadBalancerIPs": "192.0.2.17" });
  expect(await waitFor("the annotated address", () => ips(cluster, "metallb"))).toEqual(["192.0.2.17"]);

  await cluster.createService("taken", lb([{ port: 81 }]), { "metallb.io/loadBalancerIPs": "192.0.2.19" });
  const taken = await waitForNotReady(cluster, "taken");
  expect(taken.reason).toBe("AddressInUse");
  expect(taken.message).toContain("metallb.io/loadBalancerIPs");
  await cluster.createService("outside", lb(undefined, { loadBalancerIP: "198.51.100.1" }));
  const outside = await waitForNotReady(cluster, "outside");
  expect(outside.reason).toBe("AddressNotInAnyPool");
  expect(outside.message).toContain("spec.loadBalancerIP");
  expect(await ips(cluster, "taken")).toBeUndefined();
});

test("an exhausted pool is reported, and the waiting Service gets the address another one frees", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "tiny", { addresses: ["192.0.2.32/32"] });
  await metal(cluster);
  await cluster.createService("first", lb());
  await waitFor("first's address", () => ips(cluster, "first"));
  await cluster.createService("second", lb());
  expect((await waitForNotReady(cluster, "second")).reason).toBe("PoolExhausted");
  const events = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: "involvedObject.name=second",
  });
  expect(events.items.some((e) => e.type === "Warning" && e.reason === "PoolExhausted")).toBe(true);
  await cluster.core.deleteNamespacedService({ name: "first", namespace: cluster.namespace });
  expect(await waitFor("second to get the freed address", () => ips(cluster, "second"))).toEqual([
    "192.0.2.32",
  ]);
});

test("Services with the same sharing key share an address when their ports do not clash", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.48/29"] });
  await metal(cluster);
  const shared = { "metallb.io/allow-shared-ip": "dns" };
  await cluster.createService("dns-tcp", lb([{ port: 53, protocol: "TCP" }]), shared);
  const [address] = await waitFor("dns-tcp's address", () => ips(cluster, "dns-tcp"));
  await cluster.createService("dns-udp", lb([{ port: 53, protocol: "UDP" }]), shared);
  expect(await waitFor("dns-udp's address", () => ips(cluster, "dns-udp"))).toEqual([address]);
  await cluster.createService("clash", lb([{ port: 53, protocol: "UDP" }]), {
    ...shared,
    "metallb.io/loadBalancerIPs": address!,
  });
  expect((await waitForNotReady(cluster, "clash")).reason).toBe("PortConflict");

  // With externalTrafficPolicy Local only the announcing node's endpoints answer: a Service sending to other pods
  // may not join the address, and is told which Service holds it.
  const local = { externalTrafficPolicy: "Local" as const };
  await cluster.createService("web", lb([{ port: 80 }], { ...local, selector: { app: "web" } }), shared);
  const [webAddress] = await waitFor("web's address", () => ips(cluster, "web"));
  await cluster.createService("api", lb([{ port: 81 }], { ...local, selector: { app: "api" } }), {
    ...shared,
    "metallb.io/loadBalancerIPs": webAddress!,
  });
  const refused = await waitForNotReady(cluster, "api");
  expect(refused.reason).toBe("BackendMismatch");
  expect(refused.message).toContain(`shared with Service ${cluster.namespace}/`);
  expect(refused.message).toMatch(/both use Local with the same spec\.selector/);
});

test("after a restart the allocations are read back, never re-guessed, and new ones do not collide", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.64/29"] });
  const first = await metal(cluster);
  for (const n of ["a", "b", "c"]) await cluster.createService(n, lb());
  const before = await Promise.all(
    ["a", "b", "c"].map((n) => waitFor(`${n}'s address`, () => ips(cluster, n))),
  );
  await first.stop();
  await cluster.core
    .deleteNamespacedService({ name: "a", namespace: cluster.namespace })
    .catch(() => undefined);
  // "a" is stuck behind its finalizer until a controller runs again; "d" arrives while none runs.
  await cluster.createService("d", lb());
  await metal(cluster);
  const d = await waitFor("d's address", () => ips(cluster, "d"));
  expect(await ips(cluster, "b")).toEqual(before[1]);
  expect(await ips(cluster, "c")).toEqual(before[2]);
  expect([...before[1]!, ...before[2]!]).not.toContain(d[0]);
});

test("dual-stack Services get one address per family", async ({ cluster }) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "dual", { addresses: ["192.0.2.80/30", "2001:db8:80::/126"] });
  await metal(cluster);
  await cluster.createService(
    "dual",
    lb(undefined, { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv6", "IPv4"] }),
  );
  expect(await waitFor("two addresses", () => ips(cluster, "dual"))).toEqual(["2001:db8:80::", "192.0.2.80"]);
  await cluster.createService("single", lb());
  expect(await waitFor("an IPv4 address", () => ips(cluster, "single"))).toEqual(["192.0.2.81"]);
});

test("a pool the allocator cannot use says why in its status", async ({ cluster }) => {
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "hostbits", { addresses: ["192.0.2.97/28"] });
  await metal(cluster);
  await cluster.createService("x", lb());
  await waitFor("the pool to be marked invalid", async () => {
    const c = (
      (await pool.status())?.conditions as { type: string; status: string; message: string }[] | undefined
    )?.[0];
    return c?.status === "False" ? c : undefined;
  });
  expect((await waitForNotReady(cluster, "x")).reason).toMatch(
    /PoolExhausted|FamilyUnavailable|PoolDoesNotAllowService/,
  );
});

test("overlapping pools and a node's own address inside a pool are reported, and the node's address is never handed out", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await cluster.createNode("n1", { internalIP: "192.0.2.112" });
  const a = await createPool(cluster, "a", { addresses: ["192.0.2.112-192.0.2.113"] });
  const b = await createPool(cluster, "b", { addresses: ["192.0.2.113/32"], autoAssign: false });
  await metal(cluster);
  await cluster.createService("first", lb());
  expect(await waitFor("first's address", () => ips(cluster, "first"))).toEqual(["192.0.2.113"]);
  await cluster.createService("second", lb());
  expect((await waitForNotReady(cluster, "second")).reason).toBe("PoolExhausted");
  await cluster.createService("wants-node", lb(undefined, { loadBalancerIP: "192.0.2.112" }));
  const taken = await waitForNotReady(cluster, "wants-node");
  expect(taken.reason).toBe("AddressInUse");
  expect(taken.message).toContain(`${cluster.namespace}-n1`);
  type Condition = { type: string; status: string; message: string };
  const conditions = async (pool: typeof a) => ((await pool.status())?.conditions ?? []) as Condition[];
  await waitFor("the findings on pool a", async () =>
    (await conditions(a)).some((c) => c.type === "ContainsNodeAddresses" && c.status === "True"),
  );
  const onA = await conditions(a);
  expect(onA.find((c) => c.type === "ContainsNodeAddresses")!.message).toContain("192.0.2.112");
  expect(onA.find((c) => c.type === "Overlaps")).toMatchObject({ status: "True" });
  expect((await conditions(b)).find((c) => c.type === "Overlaps")!.message).toContain("192.0.2.113");
});

interface PoolObject {
  metadata: { resourceVersion: string };
  status?: { assignedIPv4?: string; conditions?: { type: string; lastTransitionTime: string }[] };
}

async function readPool(cluster: TestCluster, pool: TestPool): Promise<PoolObject> {
  return (await cluster.kubeConfig.makeApiClient(CustomObjectsApi).getClusterCustomObject({
    group: "portico.io",
    version: "v1alpha1",
    plural: "ipaddresspools",
    name: pool.name,
  })) as PoolObject;
}

async function assignedIn(cluster: TestCluster, pool: TestPool, count: string): Promise<PoolObject> {
  return waitFor(`${pool.name} to count ${count} assigned`, async () => {
    const object = await readPool(cluster, pool);
    return object.status?.assignedIPv4 === count && object;
  });
}

test("a restarted controller writes no pool status that is still right, and keeps condition transition times", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  // Pools are cluster-wide, and the controller of a test in another file running meanwhile writes every
  // pool's status with the counts of its own namespace. A pool no Service uses has the same status for all
  // of them, so only a needless write can change it. No other test uses its range: an overlap would change
  // its Overlaps condition.
  const idle = await createPool(cluster, "idle", { addresses: ["192.0.2.176/29"] });
  const used = await createPool(cluster, "used", { addresses: ["192.0.2.184/29"], autoAssign: false });
  const named = { "metallb.io/address-pool": used.name };
  const first = await metal(cluster);
  await cluster.createService("before", lb(), named);
  const usedBefore = await assignedIn(cluster, used, "1");
  const idleBefore = await assignedIn(cluster, idle, "0");
  await first.stop();

  // Wall-clock time passes, so a condition rewritten after the restart would carry a new time.
  await sleep(1100);
  const second = await metal(cluster);
  // A change after the restart makes the new controller compare every pool's status with its allocation.
  await cluster.createService("after", lb([{ port: 81 }]), named);
  const usedAfter = await assignedIn(cluster, used, "2");
  await waitFor("the restarted controller to compare the idle pool's status", async () =>
    (await total(second.metrics.statusChecks, { kind: "IPAddressPool", name: idle.name })) > 0
      ? true
      : undefined,
  );
  expect(await total(second.metrics.statusChecks, { name: idle.name, outcome: "written" })).toBe(0);
  const idleAfter = await readPool(cluster, idle);

  expect(idleAfter.metadata.resourceVersion).toBe(idleBefore.metadata.resourceVersion);
  expect(idleAfter.status).toEqual(idleBefore.status);
  expect(usedAfter.status?.conditions).toEqual(usedBefore.status?.conditions);
});
