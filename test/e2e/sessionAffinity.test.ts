// sessionAffinity: ClientIP through the clouds' load balancers: on the NLB Portico turns on the target group's
// source-IP stickiness, on Azure it sets the rules' SourceIP distribution, and the edge keeps each client on one
// pod as each cloud does; the same pods behind a Service without affinity answer one client from several pods (the
// control that the affinity is the setting's, not the edge's habit).
import { onTestFinished } from "vitest";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { eksOnEmulator, nlbAddress } from "../harness/cloudEdge/eksOnEmulator.ts";
import { describe, expect, getFrom, test, waitFor } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

/** The pods that answered `count` requests from `client`. */
async function answering(client: string, url: string, count: number): Promise<string[]> {
  const pods: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await getFrom(client, url);
    if (answer) pods.push(answer.pod);
  }
  return pods;
}

describe("session affinity through the cloud load balancers", () => {
  test("NLB: ClientIP keeps each client on one pod; without it one client reaches several", async ({
    ns,
  }) => {
    const { edge: started } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 3);
    await ns.waitAvailable("echo");
    const annotations = {
      [`${A}nlb-target-type`]: "ip",
      [`${A}healthcheck-interval`]: "5",
      [`${A}healthcheck-healthy-threshold`]: "2",
    };
    const nlb = { loadBalancerClass: "portico.io/aws-nlb" };
    await ns.createLoadBalancer("sticky", "echo", { ...nlb, sessionAffinity: "ClientIP" }, annotations);
    await ns.createLoadBalancer("spread", "echo", nlb, annotations);
    const sticky = `http://${await nlbAddress(ns, edge, "sticky")}/`;
    const spread = `http://${await nlbAddress(ns, edge, "spread")}/`;
    const lan = ns.context.client.namespace;

    // Every pod's target passes its checks (the spread Service shows all three), so stickiness has a choice.
    await waitFor(
      "all three pods to answer the LAN's client without affinity",
      async () => new Set(await answering(lan, spread, 20)).size === 3 || undefined,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await ns.waitForServing("sticky", "True");

    for (const client of [lan, edge.internetClient]) {
      const pods = await answering(client, sticky, 15);
      expect(pods, `the answers to ${client}`).toHaveLength(15);
      expect(new Set(pods).size, `the pods that answered ${client}: ${pods.join(", ")}`).toBe(1);
    }
  });

  test("Azure: ClientIP keeps each client on one pod of an IP-based pool; without it one client reaches several", async ({
    ns,
  }) => {
    const { edge: started } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 3);
    await ns.waitAvailable("echo");
    // Pod backends: the edge alone picks the pod (node backends would leave it to kube-proxy's own affinity).
    const pods = { "portico.io/target-type": "ip" };
    await ns.createLoadBalancer(
      "sticky",
      "echo",
      { loadBalancerClass: AKS_CLASS, sessionAffinity: "ClientIP" },
      pods,
    );
    await ns.createLoadBalancer("spread", "echo", { loadBalancerClass: AKS_CLASS }, pods);
    const sticky = `http://${await ns.waitForAddress("sticky", 120_000)}/`;
    const spread = `http://${await ns.waitForAddress("spread", 120_000)}/`;
    const lan = ns.context.client.namespace;
    await waitFor(
      "all three pods to answer the LAN's client without affinity",
      async () => new Set(await answering(lan, spread, 20)).size === 3 || undefined,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await waitFor(
      "the sticky Service to answer",
      async () => (await answering(lan, sticky, 1)).length === 1 || undefined,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );
    for (const client of [lan, edge.internetClient]) {
      const answered = await answering(client, sticky, 15);
      expect(answered, `the answers to ${client}`).toHaveLength(15);
      expect(new Set(answered).size, `the pods that answered ${client}: ${answered.join(", ")}`).toBe(1);
    }
  });
});
