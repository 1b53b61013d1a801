// sessionAffinity: ClientIP on the NLB: Portico turns on the target group's source-IP stickiness, and the edge
// keeps each client on one pod as ELBv2 does; the same pods behind a Service without affinity answer one client
// from several pods (the control that the stickiness is the attribute's, not the edge's habit).
import { onTestFinished } from "vitest";
import { eksOnEmulator, nlbAddress } from "../harness/cloudEdge/eksOnEmulator.ts";
import { describe, expect, getFrom, test, waitFor } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

describe("session affinity through the NLB", () => {
  test("ClientIP keeps each client on one pod; without it one client reaches several", async ({ ns }) => {
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
      async () => {
        const seen = new Set<string>();
        for (let i = 0; i < 20; i++) {
          const answer = await getFrom(lan, spread);
          if (answer) seen.add(answer.pod);
        }
        return seen.size === 3 || undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await ns.waitForServing("sticky", "True");

    for (const client of [lan, edge.internetClient]) {
      const pods: string[] = [];
      for (let i = 0; i < 15; i++) {
        const answer = await getFrom(client, sticky);
        if (answer) pods.push(answer.pod);
      }
      expect(pods, `the answers to ${client}`).toHaveLength(15);
      expect(new Set(pods).size, `the pods that answered ${client}: ${pods.join(", ")}`).toBe(1);
    }
  });
});
