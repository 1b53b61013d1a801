// Whose address the pod sees. A client on the internet (a namespace behind the emulated edge, not on the nodes'
// LAN) connects through the load balancer Portico configured: ELBv2 keeps the client's address for instance
// targets, and for ip targets only when the target group's `preserve_client_ip.enabled` says so (otherwise the
// pod sees the NLB's own address); Azure's load balancer always passes it through. With
// `externalTrafficPolicy: Local`, kube-proxy keeps it too, so the pod sees the client itself.
import { onTestFinished } from "vitest";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { eksOnEmulator, nlbAddress, nlbHostname } from "../harness/cloudEdge/eksOnEmulator.ts";
import { describe, expect, getFrom, test, waitFor, type E2eNamespace } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const NLB = { loadBalancerClass: "portico.io/aws-nlb", externalTrafficPolicy: "Local" as const };
// Internet-facing (so its security group admits the internet), checked every 5 s and healthy after 2 passes.
const FACING = {
  [`${A}scheme`]: "internet-facing",
  [`${A}healthcheck-interval`]: "5",
  [`${A}healthcheck-healthy-threshold`]: "2",
};

/** The source address (without its port) the pod saw on a request from the internet client. */
async function seenFrom(ns: E2eNamespace, internet: string, address: string): Promise<string> {
  const answer = await waitFor(
    `an answer through ${address} from the internet client`,
    async () => (await getFrom(internet, `http://${address}/`)) ?? undefined,
    { timeoutMs: 150_000, intervalMs: 500 },
  );
  return answer.client.replace(/:\d+$/, "");
}

describe("the client's address through the cloud load balancers", () => {
  test("NLB: instance targets and ip targets with preserve_client_ip show the client; plain ip targets show the NLB", async ({
    ns,
  }) => {
    const { edge: started } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("instance", "echo", NLB, FACING);
    await ns.createLoadBalancer("ip", "echo", NLB, { ...FACING, [`${A}nlb-target-type`]: "ip" });
    await ns.createLoadBalancer("kept", "echo", NLB, {
      ...FACING,
      [`${A}nlb-target-type`]: "ip",
      [`${A}target-group-attributes`]: "preserve_client_ip.enabled=true",
    });

    expect(await seenFrom(ns, edge.internetClient, await nlbAddress(ns, edge, "instance"))).toBe(
      edge.internetAddress,
    );
    // The NLB's DNS name, as a user has it from the Service's status, resolves to it from either client.
    const hostname = await nlbHostname(ns, "instance");
    expect(await seenFrom(ns, edge.internetClient, hostname)).toBe(edge.internetAddress);
    // Asked until answered, as through the internet client: one request of 2 s can be lost on a loaded machine.
    const fromLan = await waitFor(
      `an answer through ${hostname} from the LAN's client`,
      async () => (await getFrom(ns.context.client.namespace, `http://${hostname}/`)) ?? undefined,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(fromLan.pod).toMatch(/^echo-/);
    expect(await seenFrom(ns, edge.internetClient, await nlbAddress(ns, edge, "kept"))).toBe(
      edge.internetAddress,
    );
    // The negative control: the same pod, the same client, and the NLB's address in its place.
    const ip = await nlbAddress(ns, edge, "ip");
    expect(await seenFrom(ns, edge.internetClient, ip)).toBe(ip);
  });

  test("Azure: the client's address reaches the pod through node and pod-IP backends", async ({ ns }) => {
    const { edge: started } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("nodes", "echo", {
      loadBalancerClass: AKS_CLASS,
      externalTrafficPolicy: "Local",
    });
    await ns.createLoadBalancer(
      "pods",
      "echo",
      { loadBalancerClass: AKS_CLASS },
      { "portico.io/target-type": "ip" },
    );
    for (const name of ["nodes", "pods"]) {
      const address = await ns.waitForAddress(name, 120_000);
      expect(await seenFrom(ns, edge.internetClient, address)).toBe(edge.internetAddress);
    }
    // The negative control: a Cluster Service on node backends, where kube-proxy replaces the address with the
    // node's own on the way to the pod.
    await ns.createLoadBalancer("cluster", "echo", { loadBalancerClass: AKS_CLASS });
    const cluster = await ns.waitForAddress("cluster", 120_000);
    expect(await seenFrom(ns, edge.internetClient, cluster)).not.toBe(edge.internetAddress);
  });
});
