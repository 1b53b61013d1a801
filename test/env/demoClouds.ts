// The demo's clouds on the local cluster: Portico installed from the eks and aks overlays against the AWS and
// Azure emulators, each with the emulated edge carrying its load balancers, and the LAN's client reaching the
// same workload through an NLB and through an Azure frontend.
import { aksOnEmulator, AKS_CLASS } from "../harness/cloudEdge/aksOnEmulator.ts";
import { eksOnEmulator, nlbAddress, nlbHostname } from "../harness/cloudEdge/eksOnEmulator.ts";
import type { Defer } from "../harness/cloudEdge/teardown.ts";
import { clientGet, type E2eNamespace } from "../harness/localCluster/usage.ts";
import { waitFor } from "../harness/wait.ts";

/** Sends the client's requests through both clouds' load balancers to `app`'s pods; `out` tells what it saw. */
export async function showClouds(
  ns: E2eNamespace,
  app: string,
  defer: Defer,
  out: (line: string) => void,
  say: (text: string) => void,
): Promise<void> {
  const client = ns.context.client.namespace;

  say(
    "The same workload behind an NLB: the eks overlay, the AWS emulator, and the edge carrying its traffic",
  );
  const { edge: nlbEdge } = await eksOnEmulator(ns, { dataPlane: true, defer });
  await ns.createLoadBalancer(
    "web-nlb",
    app,
    { loadBalancerClass: "portico.io/aws-nlb" },
    {
      "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
      // Checks every 5 s, healthy after 2 passes: the demo waits seconds, not half a minute.
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "5",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-healthy-threshold": "2",
    },
  );
  const hostname = await nlbHostname(ns, "web-nlb");
  const nlb = await nlbAddress(ns, nlbEdge!, "web-nlb");
  const viaNlb = await waitFor("an answer through the NLB", () => clientGet(ns.context, `http://${nlb}/`), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  out(`Service ${ns.name}/web-nlb: NLB ${hostname}, carried by the edge at ${nlb}`);
  out(`curl through the NLB from the client: pod ${viaNlb.pod} on ${viaNlb.node}`);
  // The edge answers for the NLB's name in the client's namespace, as AWS's DNS does.
  out(`try it: ip netns exec ${client} curl http://${hostname}/`);

  say("And behind an Azure load balancer: the aks overlay, the Azure emulator, a public frontend");
  await aksOnEmulator(ns, { dataPlane: true, defer });
  await ns.createLoadBalancer("web-azure", app, { loadBalancerClass: AKS_CLASS });
  const frontend = await ns.waitForAddress("web-azure", 120_000);
  const viaAzure = await waitFor(
    "an answer through the Azure load balancer",
    () => clientGet(ns.context, `http://${frontend}/`),
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  out(`Service ${ns.name}/web-azure: public IP ${frontend} on the cluster's load balancer`);
  out(`curl through the Azure load balancer from the client: pod ${viaAzure.pod} on ${viaAzure.node}`);
  out(`try it: ip netns exec ${client} curl http://${frontend}/`);
}
