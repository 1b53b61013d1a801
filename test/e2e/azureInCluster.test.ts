// The aks overlay's controller running in the cluster, as on AKS but against Portico's ARM emulator: its
// image, ServiceAccount and RBAC, its azure.json ConfigMap (with the keys this cluster needs given as the
// AZURE_* / PORTICO_AZURE_* variables that override it), and the Azure SDK reaching ARM from a pod with a
// service principal's secret in place of workload identity. A Service of class portico.io/azure-lb gets a
// frontend with a public IP on the shared load balancer, the three nodes in its backend pool, and loses them
// when deleted.
import { onTestFinished } from "vitest";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { AZURE_WORLD } from "../harness/azure.ts";
import { describe, test, waitFor } from "../harness/e2e.ts";

describe("the aks overlay in the cluster", () => {
  test("its controller pods give a Service a frontend with a public IP and the nodes as backends, and remove them", async ({
    ns,
  }) => {
    const { azure } = await aksOnEmulator(ns, { defer: onTestFinished });

    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("web", "echo", { loadBalancerClass: AKS_CLASS });
    const address = await ns.waitForAddress("web", 120_000);

    const nodeIps = ns.context.nodes.map((n) => n.layout.ip).sort();
    const svc = await ns.core.readNamespacedService({ name: "web", namespace: ns.name });
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    await waitFor(
      "a frontend with the Service's public IP, a rule for port 80 and the three nodes as backends",
      async () => {
        const lbs = [];
        for await (const lb of azure.network.loadBalancers.list(AZURE_WORLD.resourceGroup)) lbs.push(lb);
        const ips = [];
        for await (const ip of azure.network.publicIPAddresses.list(AZURE_WORLD.resourceGroup)) ips.push(ip);
        const pip = ips.find((ip) => ip.ipAddress === address);
        const lb = lbs.find((l) =>
          l.frontendIPConfigurations?.some(
            (f) => f.publicIPAddress?.id?.toLowerCase() === pip?.id?.toLowerCase(),
          ),
        );
        const rule = lb?.loadBalancingRules?.find((r) => r.frontendPort === 80);
        const backends = (lb?.backendAddressPools ?? [])
          .flatMap((p) => p.loadBalancerBackendAddresses ?? [])
          .map((a) => a.ipAddress!)
          .sort();
        const seen = {
          pip: pip?.name,
          lb: lb?.name,
          rule: rule && `${rule.frontendPort}->${rule.backendPort}`,
          backends,
        };
        if (
          pip &&
          lb &&
          rule?.backendPort === nodePort &&
          JSON.stringify(backends) === JSON.stringify(nodeIps)
        )
          return true;
        throw new Error(JSON.stringify(seen));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    await ns.core.deleteNamespacedService({ name: "web", namespace: ns.name });
    await waitFor(
      "the Service's public IP to be deleted",
      async () => {
        for await (const ip of azure.network.publicIPAddresses.list(AZURE_WORLD.resourceGroup))
          if (ip.ipAddress === address) throw new Error(`${ip.name} still there`);
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });
});
