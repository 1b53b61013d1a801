// A pool edited under Services that hold its addresses, on the real apiserver: a Service whose address leaves the
// pool is given another, with a Warning Event saying which went, why and which came (clients use the address);
// a Service that asked for its address is refused rather than moved, and keeps it in its status.
import type { V1Service } from "@kubernetes/client-node";
import { expect, test, waitFor, waitForNotReady, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

const METAL = "portico.io/metal";

const lb = (spec: Partial<NonNullable<V1Service["spec"]>> = {}): V1Service["spec"] => ({
  type: "LoadBalancer",
  loadBalancerClass: METAL,
  selector: { app: "x" },
  ports: [{ name: "http", protocol: "TCP", port: 80 }],
  ...spec,
});

async function ip(cluster: TestCluster, name: string): Promise<string | undefined> {
  return (await cluster.getService(name)).status?.loadBalancer?.ingress?.[0]?.ip;
}

async function warnings(cluster: TestCluster, name: string, reason: string): Promise<string[]> {
  const list = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.filter((e) => e.type === "Warning" && e.reason === reason).map((e) => e.message ?? "");
}

test("an address taken out of its pool: the Service gets another, with a Warning naming both", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "lan", { addresses: ["192.0.2.64/30"] });
  await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL });
  await cluster.createService("web", lb());
  await cluster.createService("pinned", lb({ loadBalancerIP: "192.0.2.66" }));
  expect(await waitFor("web's address", () => ip(cluster, "web"))).toBe("192.0.2.64");
  expect(await waitFor("pinned's address", () => ip(cluster, "pinned"))).toBe("192.0.2.66");

  await pool.replace({ addresses: ["192.0.2.72/30"] });
  const moved = await waitFor("web's new address", async () => {
    const now = await ip(cluster, "web");
    return now === "192.0.2.64" ? undefined : now;
  });
  expect(moved).toBe("192.0.2.72");
  const [changed, ...more] = await waitFor("the AddressChanged Warning", async () => {
    const found = await warnings(cluster, "web", "AddressChanged");
    return found.length ? found : undefined;
  });
  expect(more).toEqual([]);
  expect(changed).toMatch(
    /^192\.0\.2\.64 is no longer in any IPAddressPool, so the Service's address is now 192\.0\.2\.72; point clients and DNS records at 192\.0\.2\.72/,
  );

  // The Service that asked for its address is refused, naming the field, and keeps the address in its status.
  const refused = await waitForNotReady(cluster, "pinned");
  expect(refused.reason).toBe("AddressNotInAnyPool");
  expect(refused.message).toMatch(/^spec\.loadBalancerIP: 192\.0\.2\.66 is not in any IPAddressPool/);
  expect(await ip(cluster, "pinned")).toBe("192.0.2.66");
  expect(await warnings(cluster, "pinned", "AddressChanged")).toEqual([]);
});
