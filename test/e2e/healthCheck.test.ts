// externalTrafficPolicy: Local as kube-proxy implements it: the Service's healthCheckNodePort answers 200 on
// the nodes holding a ready pod and 503 elsewhere, and Portico's announcement follows the same truth — only
// a node with a ready local endpoint answers for the address, and nobody when there is none.
import { arping } from "../integration/metal/clients.ts";
import { clientStatus, describe, expect, test, waitFor, type E2eNamespace } from "../harness/e2e.ts";
import { announcer } from "../harness/nodeLoss.ts";

/** The healthCheckNodePort's answer on every node, by node name. */
async function healthByNode(ns: E2eNamespace, port: number): Promise<Record<string, number>> {
  const entries = await Promise.all(
    ns.context.nodes.map(
      async (n) =>
        [n.layout.name, await clientStatus(ns.context, `http://${n.layout.ip}:${port}/healthz`)] as const,
    ),
  );
  return Object.fromEntries(entries);
}

async function podNodes(ns: E2eNamespace): Promise<string[]> {
  const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
  return pods.items
    .filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
    .map((p) => p.spec!.nodeName!);
}

const scale = (ns: E2eNamespace, replicas: number) => ns.scale("echo", replicas);

describe("externalTrafficPolicy Local", () => {
  test("kube-proxy's health check answers 200/503 as endpoints come and go, and the announcing node follows it", async ({
    ns,
  }) => {
    await ns.deployEcho("echo", 1);
    const svc = await ns.createLoadBalancer("web", "echo", { externalTrafficPolicy: "Local" });
    const port = svc.spec!.healthCheckNodePort!;
    expect(port).toBeGreaterThan(0);
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");

    const expectServedFrom = async (node: string) => {
      const expected = Object.fromEntries(
        ns.context.nodes.map((n) => [n.layout.name, n.layout.name === node ? 200 : 503]),
      );
      await waitFor(
        `health ${JSON.stringify(expected)}`,
        async () => {
          const got = await healthByNode(ns, port);
          if (JSON.stringify(got) === JSON.stringify(expected)) return true;
          throw new Error(`got ${JSON.stringify(got)}`);
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      await waitFor(
        `${node} to answer ARP for ${address}`,
        async () => {
          const who = await announcer(ns.context, address);
          if (who?.layout.name === node) return true;
          throw new Error(`answered by ${who?.layout.name ?? "nobody"}`);
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    };

    const [first] = await podNodes(ns);
    await expectServedFrom(first!);

    // No endpoint anywhere: every node says 503, and nobody answers for the address.
    await scale(ns, 0);
    await waitFor(
      "every node's health check to say 503",
      async () => {
        const got = await healthByNode(ns, port);
        if (Object.values(got).every((code) => code === 503)) return true;
        throw new Error(`got ${JSON.stringify(got)}`);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    await waitFor(
      "nobody to answer ARP for the address",
      async () => {
        const answers = await arping(ns.context.client, address, 2);
        if (answers.macs.length === 0) return true;
        throw new Error(`answered by ${answers.macs.join(", ")}`);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // An endpoint again, wherever the scheduler puts it: that node, and only it, serves.
    await scale(ns, 1);
    await ns.waitAvailable("echo");
    const [second] = await podNodes(ns);
    await expectServedFrom(second!);
  });
});
