// `porticoctl migrate` is the providers' own plans: moving from MetalLB to Portico's bare-metal provider, it says
// which Service keeps the address it already has and which gets one, before any controller of Portico runs.
import { inject } from "vitest";
import { main } from "../../../controller/cli/porticoctl.ts";
import { expect, mergePatch, test } from "../../harness/index.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

async function ctl(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main([...args, "--kubeconfig", inject("kubeconfig")], (s) => (out += s));
  return { code, out };
}

test("migrate to the bare-metal provider: the address MetalLB gave is kept, a Service without one is assigned one", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "lan", { addresses: ["198.51.100.96/30"] });
  const unclassed = {
    type: "LoadBalancer",
    selector: { app: "web" },
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
  };
  await cluster.createService("old", unclassed);
  // As MetalLB left it: an address in the Service's status.
  await cluster.core.patchNamespacedServiceStatus(
    {
      name: "old",
      namespace: cluster.namespace,
      body: { status: { loadBalancer: { ingress: [{ ip: "198.51.100.98" }] } } },
    },
    mergePatch,
  );
  // Its pool named: pools are cluster-wide, and other tests' (MetalLB's serve every namespace) may have room.
  await cluster.createService("new", unclassed, { "metallb.io/address-pool": pool.name });
  const args = ["migrate", "-n", cluster.namespace, "--provider", "metal", "--default-load-balancer"];

  const { code, out } = await ctl(...args);
  expect(code).toBe(0);
  expect(out).toContain(`${cluster.namespace}/old  keep`);
  expect(out).toContain("keep 198.51.100.98");
  expect(out).toContain(`${cluster.namespace}/new  change`);
  expect(out).toMatch(new RegExp(`assign 198\\.51\\.100\\.\\d+ from pool ${pool.name}`));
  // Without --default-load-balancer unclassed Services are not Portico's: nothing to say.
  expect((await ctl("migrate", "-n", cluster.namespace, "--provider", "metal")).out).toContain(
    "no Service that Portico would serve",
  );
  // A dry run: the new Service still has no address.
  expect((await cluster.getService("new")).status?.loadBalancer?.ingress ?? []).toEqual([]);
});
