// The Azure load balancer carries packets: a client on the LAN (outside the virtual network, as an Internet client
// is) reaches the pods through the frontend Portico configured in the Azure emulator, by the emulated edge
// (test/harness/cloudEdge/), as the aks overlay's controller in the cluster keeps the backend pool, probes, rules
// and security rules in step. Probes run against the real kube-proxy and pods and steer the traffic; the NSG on
// the nodes' and pods' subnets judges every new flow with the client's own address.
import { onTestFinished } from "vitest";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { onlyAdmittedClientsAnswered } from "../harness/cloudEdge/sourceRanges.ts";
import { clientGet, clientStatus, describe, expect, test, waitFor } from "../harness/e2e.ts";

const ALLOWED_RANGES = "service.beta.kubernetes.io/azure-allowed-ip-ranges";

describe("the Azure load balancer's data path on the local cluster", () => {
  test("HTTP from the LAN reaches the pods through a public frontend; Local probes pass only where a pod runs; no pod: dropped and not Serving, then served again", async ({
    ns,
  }) => {
    const { edge: started } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("web", "echo", { loadBalancerClass: AKS_CLASS });
    await ns.createLoadBalancer("local", "echo", {
      loadBalancerClass: AKS_CLASS,
      externalTrafficPolicy: "Local",
    });
    const web = await ns.waitForAddress("web", 120_000);
    const local = await ns.waitForAddress("local", 120_000);

    // Both pods answer through the node backends once the nodes pass their TCP probes on the node port.
    const pods = (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" })).items;
    const names = pods.map((p) => p.metadata!.name!).sort();
    const seen = new Set<string>();
    await waitFor(
      "both pods to answer through the load balancer",
      async () => {
        const answer = await clientGet(ns.context, `http://${web}/`);
        if (answer) seen.add(answer.pod);
        if (seen.size === names.length) return true;
        throw new Error(`${seen.size} answered; the edge: ${edge.describe()}`);
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect([...seen].sort()).toEqual(names);

    // Local: kube-proxy's /healthz on the healthCheckNodePort passes only on nodes running a pod; the others are
    // out of rotation, so no request is sent where kube-proxy would drop it.
    const podNodes = new Set(pods.map((p) => p.spec!.nodeName!));
    const expected = Object.fromEntries(
      ns.context.nodes.map((n) => [n.layout.ip, podNodes.has(n.layout.name) ? "healthy" : "unhealthy"]),
    );
    expect(Object.values(expected)).toContain("unhealthy");
    await waitFor(
      "the Local Service's probes to pass exactly on the nodes running a pod",
      () => {
        const now = Object.fromEntries(Object.keys(expected).map((ip) => [ip, edge.stateOf(local, 80, ip)]));
        if (JSON.stringify(now) === JSON.stringify(expected)) return true;
        throw new Error(JSON.stringify(now));
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const failed: string[] = [];
    for (let i = 0; i < 20; i++)
      if (!(await clientGet(ns.context, `http://${local}/`))) failed.push(`${i}: ${edge.describe()}`);
    expect(failed).toEqual([]);

    // No pod: every probe fails and the load balancer drops new flows; the Service says it does not serve.
    await ns.scale("echo", 0);
    await waitFor(
      "requests to go unanswered",
      async () => (await clientStatus(ns.context, `http://${web}/`)) === 0,
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
    expect(await ns.waitForServing("web", "False", 120_000)).toMatchObject({ reason: "NoReadyEndpoints" });
    await ns.scale("echo", 1);
    await waitFor(
      "the new pod to answer through the load balancer",
      async () => (await clientGet(ns.context, `http://${web}/`)) ?? undefined,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(await ns.waitForServing("web", "True", 120_000)).toMatchObject({ reason: "BackendsReady" });
  });

  test("the network security group admits the allowed ranges and drops every other client, until the range includes it", async ({
    ns,
  }) => {
    const { edge } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    const client = `${ns.context.client.ipv4}/32`;
    await ns.createLoadBalancer("open", "echo", {
      loadBalancerClass: AKS_CLASS,
      loadBalancerSourceRanges: [client],
    });
    await ns.createLoadBalancer(
      "closed",
      "echo",
      { loadBalancerClass: AKS_CLASS },
      { [ALLOWED_RANGES]: "198.51.100.0/24" },
    );
    const open = `http://${await ns.waitForAddress("open", 120_000)}/`;
    const closed = `http://${await ns.waitForAddress("closed", 120_000)}/`;
    // With the client's address in the allowed ranges, Portico writes the security rule and the same frontend
    // answers.
    await onlyAdmittedClientsAnswered(
      ns,
      edge!,
      { open, closed },
      { metadata: { annotations: { [ALLOWED_RANGES]: `198.51.100.0/24,${client}` } } },
    );
  });

  test("floating IP: the node receives the frontend address and kube-proxy serves it; pod-IP backends are the pods themselves", async ({
    ns,
  }) => {
    const { edge } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer(
      "float",
      "echo",
      { loadBalancerClass: AKS_CLASS },
      { "portico.io/floating-ip": "true" },
    );
    await ns.createLoadBalancer(
      "direct",
      "echo",
      { loadBalancerClass: AKS_CLASS },
      { "portico.io/target-type": "ip" },
    );
    const [pod] = (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" })).items;
    for (const name of ["float", "direct"]) {
      const address = await ns.waitForAddress(name, 120_000);
      const answer = await waitFor(
        `${name} to answer through the load balancer`,
        async () => (await clientGet(ns.context, `http://${address}/`)) ?? undefined,
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      expect(answer.pod).toBe(pod!.metadata!.name);
    }
    // The pod-IP backend is probed on the pod's own port: the pod itself passes.
    const direct = await ns.waitForAddress("direct");
    expect(edge!.stateOf(direct, 80, pod!.status!.podIP!)).toBe("healthy");
  });
});

describe("internal Azure frontends on the local cluster", () => {
  test("an internal Service takes a private address of the frontends' subnet; the virtual network's rules keep the LAN's client out unless its source ranges admit it", async ({
    ns,
  }) => {
    const { edge } = await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    const internal = { "service.beta.kubernetes.io/azure-load-balancer-internal": "true" };
    // The LAN's client is outside the virtual network: an internal frontend admits it only by its source ranges.
    await ns.createLoadBalancer(
      "admitted",
      "echo",
      { loadBalancerClass: AKS_CLASS, loadBalancerSourceRanges: [`${ns.context.client.ipv4}/32`] },
      internal,
    );
    await ns.createLoadBalancer("vnet-only", "echo", { loadBalancerClass: AKS_CLASS }, internal);
    const admitted = await ns.waitForAddress("admitted", 120_000);
    const vnetOnly = await ns.waitForAddress("vnet-only", 120_000);
    // The subnet the controller is told to take internal frontends from (aksOnEmulator's VNET.frontends).
    for (const address of [admitted, vnetOnly]) expect(address).toMatch(/^192\.0\.2\.(17[6-9]|18\d|19[01])$/);
    const answer = await waitFor(
      "the pod to answer through the internal frontend",
      async () => {
        const got = await clientGet(ns.context, `http://${admitted}/`);
        if (got) return got;
        throw new Error(`no answer; the edge: ${edge!.describe()}`);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(answer.pod).toMatch(/^echo-/);
    // The same pod, the same nodes, passing their probes (one answered); everything ARM holds applied: dropped.
    await edge!.settled();
    for (let i = 0; i < 3; i++) expect(await clientStatus(ns.context, `http://${vnetOnly}/`)).toBe(0);
  });
});
