// Traffic from the LAN's client through a LoadBalancer address to pods, with every hop real: the address
// given by Portico's controller pod, announced by the speaker pod of one node over ARP, taken in by that
// node's kube-proxy rules and carried to a pod run by kubelet and containerd.
import { Address4 } from "ip-address";
import { clientGet, describe, expect, test, waitFor, type EchoAnswer } from "../harness/e2e.ts";

describe("a LoadBalancer Service on the local cluster", () => {
  test("externalTrafficPolicy Cluster: the client reaches every pod through the address", async ({ ns }) => {
    await ns.deployEcho("echo", 2);
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    expect(new Address4(address).isInSubnet(new Address4(ns.context.pool))).toBe(true);
    await ns.waitAvailable("echo");

    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    const podNames = pods.items.map((p) => p.metadata!.name!).sort();
    expect(podNames).toHaveLength(2);
    // kube-proxy spreads connections at random: both pods answer within a few dozen requests.
    const seen = new Set<string>();
    await waitFor(
      `answers from both pods ${podNames.join(", ")} at http://${address}/`,
      async () => {
        const answer = await clientGet(ns.context, `http://${address}/`);
        if (answer) seen.add(answer.pod);
        return podNames.every((p) => seen.has(p)) || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
  });

  test("externalTrafficPolicy Local: the pod sees the client's own address", async ({ ns }) => {
    await ns.deployEcho("echo", 1);
    await ns.createLoadBalancer("web", "echo", { externalTrafficPolicy: "Local" });
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    const answer = await waitFor<EchoAnswer>(
      `an answer at http://${address}/`,
      () => clientGet(ns.context, `http://${address}/`),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(answer.client.split(":")[0]).toBe(ns.context.client.ipv4);
  });
});
