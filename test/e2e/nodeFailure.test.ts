// A node lost while a client sends requests through the LoadBalancer address: the node that announces the
// address is cut off the LAN (its cable pulled) or loses its power (kubelet, containerd, kube-proxy and every
// container killed at once); another node's speaker takes the address over and the client's requests
// succeed again; when the node returns (plugged in, or booted again), the cluster settles back. Times are
// reported here and measured over many trials by `make bench-cluster`.
import { ClientLoad, clusterSettled, describe, expect, test } from "../harness/e2e.ts";
import { cutAnnouncer } from "../harness/nodeLoss.ts";

describe.each(["link", "power"] as const)("a node lost under load (%s)", (loss) => {
  test("the address moves to another node and the client's requests succeed again", async ({ ns }) => {
    await ns.deployEcho("echo", 3, { spread: true });
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    const load = new ClientLoad(ns.context, `http://${address}/`, { intervalMs: 50, timeoutMs: 500 });
    try {
      await load.waitSteady();
      const trials = [];
      for (let i = 0; i < 2; i++) {
        const m = await cutAnnouncer(ns.context, address, load, 30_000, loss);
        console.log(
          `node ${m.node} lost (${loss}): no request got through for ${m.outageMs} ms, last failure at ${m.lastFailureMs} ms, ${m.failed} of ${m.total} failed`,
        );
        trials.push(m);
        await clusterSettled(ns.context);
        await load.waitSteady(20);
      }
      // Every trial recovered (cutAnnouncer fails otherwise) and, after the last, everything answers again.
      expect(trials).toHaveLength(2);
      const tail = load.results.slice(-20);
      expect(tail.every((r) => r.ok)).toBe(true);
    } finally {
      await load.stop();
    }
  });
});
