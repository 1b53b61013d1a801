// The demo's real path: a local cluster of three kubelet nodes with Portico installed from its image and the
// metal overlay, a workload of two pods behind a LoadBalancer Service, and the LAN's client reaching them
// through the address Portico gave it and one node's speaker announces; then the same workload through an NLB
// and an Azure load balancer carried by the emulated edge (demoClouds.ts).
import { join } from "node:path";
import { describeCluster, startClusterWithPortico } from "../harness/localCluster/install.ts";
import { clientGet, E2eNamespace, type EchoAnswer } from "../harness/localCluster/usage.ts";
import { announcer } from "../harness/nodeLoss.ts";
import { waitFor } from "../harness/wait.ts";
import { teardownList } from "../harness/cloudEdge/teardown.ts";
import { showClouds } from "./demoClouds.ts";

export const DEMO_POOL = "192.0.2.240/28";

export interface ClusterDemo {
  kubeconfig: string;
  lines: string[];
  stop(): Promise<void>;
}

export async function startClusterDemo(dir: string, say: (text: string) => void): Promise<ClusterDemo> {
  const { cluster, images, seconds } = await startClusterWithPortico({
    dir: join(dir, "cluster"),
    pool: { name: "demo", addresses: [DEMO_POOL] },
  });
  const lines: string[] = [];
  const out = (line: string) => (console.log(`  ${line}`), lines.push(line));
  let ns: E2eNamespace;
  try {
    out(
      `images ${images.portico.ref} (built from the Dockerfile), ${images.workload.ref}; ` +
        `images ${seconds.images.toFixed(0)} s, cluster ${seconds.cluster.toFixed(0)} s, Portico rolled out in ${seconds.install.toFixed(0)} s`,
    );
    const core = cluster.coreApi();
    for (const node of (await core.listNode()).items) {
      const ip = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
      out(
        `node ${node.metadata!.name}  ${ip}  kubelet ${node.status?.nodeInfo?.kubeletVersion}  ${node.status?.nodeInfo?.containerRuntimeVersion}`,
      );
    }
    const system = await core.listNamespacedPod({ namespace: "portico-system" });
    for (const pod of system.items)
      out(`pod portico-system/${pod.metadata!.name}  ${pod.status?.phase}  on ${pod.spec?.nodeName}`);

    say("A workload of two pods behind a LoadBalancer Service of class portico.io/metal");
    const context = describeCluster(cluster, images, DEMO_POOL);
    ns = await E2eNamespace.create(context, "demo");
    await ns.deployEcho("echo", 2);
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    const node = await waitFor("a node to announce the address", () => announcer(context, address), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    out(`Service demo/web got ${address}; ${node.layout.name}'s speaker answers ARP for it`);
    const answers: EchoAnswer[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await waitFor(
        `an answer from http://${address}/`,
        () => clientGet(context, `http://${address}/`),
        {
          timeoutMs: 30_000,
          intervalMs: 200,
        },
      );
      answers.push(answer);
    }
    for (const a of answers)
      out(`curl http://${address}/ from the client (${cluster.client.ipv4}): pod ${a.pod} on ${a.node}`);
    out(`try it: ip netns exec ${cluster.client.namespace} curl http://${address}/`);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  const clouds = teardownList();
  await showClouds(ns, "echo", clouds.defer, out, say).catch((err: Error) =>
    out(`the clouds' part failed: ${err.message}`),
  );
  const stop = async () => {
    await clouds.undo();
    await cluster.stop();
  };
  return { kubeconfig: cluster.kubeconfig, lines, stop };
}
