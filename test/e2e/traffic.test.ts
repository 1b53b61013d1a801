// Traffic from the LAN's client through a LoadBalancer address to pods, with every hop real: the address
// given by Portico's controller pod, announced by the speaker pod of one node over ARP, taken in by that
// node's kube-proxy rules and carried to a pod run by kubelet and containerd.
import { Address4 } from "ip-address";
import { mergePatch } from "../../shared/patch.ts";
import { clientGet, describe, expect, test, waitFor, type EchoAnswer } from "../harness/e2e.ts";
import { announcer } from "../harness/nodeLoss.ts";

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

describe("externalTrafficPolicy Cluster", () => {
  test("the announcing node serves the address though no pod runs on it", async ({ ns }) => {
    await ns.deployEcho("echo", 1);
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    const node = await waitFor(`a node answering ARP for ${address}`, () => announcer(ns.context, address), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    // The pod moves off the announcing node; with Cluster the announcer does not depend on where pods run.
    const away = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: "kubernetes.io/hostname", operator: "NotIn", values: [node.layout.name] },
              ],
            },
          ],
        },
      },
    };
    await ns.apps.patchNamespacedDeployment(
      { name: "echo", namespace: ns.name, body: { spec: { template: { spec: { affinity: away } } } } },
      mergePatch,
    );
    const answer = await waitFor(
      `an answer at http://${address}/ from a pod away from ${node.layout.name}`,
      async () => {
        const a = await clientGet(ns.context, `http://${address}/`);
        return a && a.node !== node.layout.name ? a : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(answer.node).not.toBe(node.layout.name);
    expect((await announcer(ns.context, address))?.layout.name).toBe(node.layout.name);
  });
});
