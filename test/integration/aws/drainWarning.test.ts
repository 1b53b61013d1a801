// A Warning when the NLB drains a stopping pod's connections for longer than the pod is given to stop: with ip
// targets ELBv2 keeps a deregistered pod's connections for the deregistration delay (300 s unless set), and the
// pod exits at the end of its grace period (30 s unless set), cutting what is still open.
import { DRAIN_WARNING } from "../../../controller/drainWarning.ts";
import { expect, test, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, serviceEvents, waitForServiceEvent } from "./fixtures.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const IP = { [`${P}nlb-target-type`]: "ip" };

/** A pod on `node` that was deleted with a grace period and is stopping (no kubelet here to end it). */
async function stoppingPod(cluster: TestCluster, name: string, node: string, graceSeconds: number) {
  const pod = await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    body: {
      metadata: { name, labels: { app: "web" } },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: graceSeconds,
        containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }],
      },
    },
  });
  await cluster.core.deleteNamespacedPod({
    name,
    namespace: cluster.namespace,
    gracePeriodSeconds: graceSeconds,
  });
  const stopping = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
  expect(stopping.metadata?.deletionGracePeriodSeconds).toBe(graceSeconds);
  return { name, uid: pod.metadata!.uid! };
}

test("a pod given less time to stop than the target groups drain is warned about, naming both settings", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const node = world.nodes[0]!;
  await startPortico(cluster);
  // Each Service behind one ready pod and one stopping (terminating, still serving) pod given 30 s. The slices come
  // first, so the first pass of each Service already sees the stopping pod.
  const long = await stoppingPod(cluster, "stopping-long", node, 30);
  const short = await stoppingPod(cluster, "stopping-short", node, 30);
  const slice = (service: string, ready: string, stopping: string, pod: { name: string; uid: string }) =>
    cluster.createEndpointSlice(
      service,
      [
        { ip: ready, nodeName: node },
        { ip: stopping, nodeName: node, ready: false, serving: true, terminating: true, pod },
      ],
      [{ name: "http", port: 8080 }],
    );
  await slice("long", "10.0.0.30", "10.0.0.31", long);
  await slice("short", "10.0.0.40", "10.0.0.41", short);
  await cluster.createService("long", lbService(), IP);
  await cluster.createService("short", lbService(), {
    ...IP,
    [`${P}target-group-attributes`]: "deregistration_delay.timeout_seconds=20",
  });

  const warning = await waitForServiceEvent(cluster, "long", "Warning", DRAIN_WARNING);
  expect(warning.message).toContain(
    "pod stopping-long is given 30 s to stop (terminationGracePeriodSeconds)",
  );
  expect(warning.message).toContain("drains its connections for 300 s");
  expect(warning.message).toContain(
    `${P}target-group-attributes: deregistration_delay.timeout_seconds=<seconds>`,
  );

  // Drained for 20 s, within the pod's 30: nothing to warn of. Its pass is over once the load balancer's Event,
  // recorded after any Warning of the same pass, is there.
  await waitForServiceEvent(cluster, "short", "Normal", "EnsuredLoadBalancer");
  expect((await serviceEvents(cluster, "short")).filter((e) => e.reason === DRAIN_WARNING)).toEqual([]);
});
