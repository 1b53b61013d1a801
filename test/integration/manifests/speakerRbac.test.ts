// The speaker's ServiceAccount and RBAC from the metal overlay: the speaker's own Kubernetes code (its
// list-watches and its Events) works under them, and nothing else is allowed.
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { pino } from "pino";
import { KubeCache } from "../../../speaker/kube/cache.ts";
import {
  NO_MATCHING_NODE,
  NODE_ASSIGNED,
  recordNoMatchingNode,
  recordNodeAssigned,
} from "../../../speaker/kube/events.ts";
import { expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { installCrds, renderOverlay, statusOf } from "../../harness/manifests.ts";
import { L2StatusWriter } from "../../../speaker/kube/l2statusWriter.ts";
import { planL2Statuses } from "../../../speaker/l2statusPlan.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { allowedVerbs, installRbac, type Grant } from "./access.ts";

const SA = "portico-speaker";

test("under its own ServiceAccount the speaker watches Services, EndpointSlices, Nodes and pools and records its Events", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  const pool = await createPool(cluster, "edge", {
    addresses: ["192.0.2.224/30"],
    nodeSelectors: [{ matchLabels: { edge: "true" } }],
  });
  const kc = await installRbac(cluster, "metal", SA);
  const node = (await cluster.createNode("n1", { internalIP: "192.0.2.11" })).metadata!.name!;
  // Every namespace, as the DaemonSet runs it; Nodes of this test only.
  const cache = new KubeCache(kc, pino({ level: "silent" }), { nodeSelector: cluster.nodeSelector });
  cluster.defer(() => cache.stop());
  await cache.start();
  expect(cache.nodes.list().map((n) => n.metadata!.name)).toEqual([node]);

  await cluster.createService("web", {
    type: "LoadBalancer",
    loadBalancerClass: "portico.io/metal",
    ports: [{ port: 80 }],
  });
  await cluster.createEndpointSlice("web", [{ ip: "10.0.0.5", nodeName: node }], [{ port: 8080 }]);
  const svc = await waitFor("the speaker's cache to see the Service", () =>
    cache.services.get("web", cluster.namespace),
  );
  await waitFor("the speaker's cache to see the EndpointSlice", () =>
    cache.endpointSlices.list(cluster.namespace).length === 1 ? true : undefined,
  );

  const seen = cache.pools().find((p) => p.metadata?.name === pool.name);
  expect(seen?.spec).toMatchObject({ nodeSelectors: [{ matchLabels: { edge: "true" } }] });

  const core = kc.makeApiClient(CoreV1Api);
  await recordNodeAssigned(core, pino({ level: "silent" }), svc, node, ["192.0.2.50"]);
  await recordNoMatchingNode(core, pino({ level: "silent" }), svc, node, [
    { address: "192.0.2.225", pool: pool.name, reason: "noMatchingNode" },
  ]);
  const events = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: "involvedObject.name=web",
  });
  expect(events.items.map((e) => [e.type, e.reason, e.source?.component]).sort()).toEqual([
    ["Normal", NODE_ASSIGNED, "portico-speaker"],
    ["Warning", NO_MATCHING_NODE, "portico-speaker"],
  ]);

  // Its ServiceL2Status record: created, overwritten when the announcement changes, deleted when it ends.
  const records = () => cache.l2Statuses().filter((r) => r.namespace === cluster.namespace);
  const writer = new L2StatusWriter(
    kc,
    pino({ level: "silent" }),
    () => undefined,
    () => undefined,
  );
  const plan = (addresses: string[]) =>
    planL2Statuses({
      node,
      announced: addresses.map((address) => ({
        service: `${cluster.namespace}/web`,
        uid: svc.metadata!.uid!,
        address,
        interfaces: ["eth0"],
      })),
      reported: [],
      existing: records(),
      live: new Set([node]),
    });
  writer.apply(plan(["192.0.2.50"]));
  await waitFor("the record in the speaker's cache", () =>
    records().find((r) => r.status.addresses.join() === "192.0.2.50"),
  );
  writer.apply(plan(["192.0.2.50", "192.0.2.51"]));
  await waitFor("the record overwritten", () =>
    records().find((r) => r.status.addresses.join() === "192.0.2.50,192.0.2.51"),
  );
  writer.apply(plan([]));
  await waitFor("the record deleted", () => records().length === 0);
});

test("the speaker's ServiceAccount may only read what it watches and create Events", async ({ cluster }) => {
  const kc = await installRbac(cluster, "metal", SA);
  const ns = cluster.namespace;
  const expected: Grant[] = [
    { group: "", resource: "services", verbs: ["list", "watch"] },
    { group: "", resource: "services", subresource: "status", verbs: [] },
    { group: "discovery.k8s.io", resource: "endpointslices", verbs: ["list", "watch"] },
    { group: "", resource: "nodes", verbs: ["list", "watch"] },
    { group: "", resource: "events", namespace: ns, verbs: ["create"] },
    { group: "coordination.k8s.io", resource: "leases", namespace: ns, verbs: [] },
    { group: "portico.io", resource: "ipaddresspools", verbs: ["list", "watch"] },
    { group: "portico.io", resource: "ipaddresspools", subresource: "status", verbs: [] },
    { group: "portico.io", resource: "l2advertisements", verbs: ["list", "watch"] },
    {
      group: "portico.io",
      resource: "servicel2statuses",
      namespace: ns,
      verbs: ["list", "watch", "create", "patch", "delete"],
    },
    {
      group: "portico.io",
      resource: "servicel2statuses",
      verbs: ["list", "watch", "create", "patch", "delete"],
    },
    {
      group: "metallb.io",
      resource: "ipaddresspools",
      namespace: "metallb-system",
      verbs: ["list", "watch"],
    },
    {
      group: "metallb.io",
      resource: "l2advertisements",
      namespace: "metallb-system",
      verbs: ["list", "watch"],
    },
    { group: "metallb.io", resource: "ipaddresspools", subresource: "status", verbs: [] },
    { group: "metallb.io", resource: "bgpadvertisements", verbs: [] },
    { group: "", resource: "secrets", namespace: ns, verbs: [] },
    { group: "", resource: "pods", verbs: [] },
  ];
  expect(await allowedVerbs(cluster.kubeConfig, ns, SA, expected)).toEqual(expected);

  // And the real calls are refused: it cannot move an address by writing a Service, a Node or a pool.
  await installPoolCrd(cluster);
  const pool = await createPool(cluster, "lan", { addresses: ["192.0.2.228/30"] });
  const node = (await cluster.createNode("n1")).metadata!.name!;
  await cluster.createService("web", { type: "ClusterIP", ports: [{ port: 80 }] });
  const core = kc.makeApiClient(CoreV1Api);
  const refused = {
    patchServiceStatus: await statusOf(
      core.patchNamespacedServiceStatus({ name: "web", namespace: ns, body: { status: {} } }, mergePatch),
    ),
    patchNode: await statusOf(
      core.patchNode({ name: node, body: { metadata: { labels: { x: "y" } } } }, mergePatch),
    ),
    patchPool: await statusOf(
      kc.makeApiClient(CustomObjectsApi).patchClusterCustomObject(
        {
          group: "portico.io",
          version: "v1alpha1",
          plural: "ipaddresspools",
          name: pool.name,
          body: { spec: { nodeSelectors: [] } },
        },
        mergePatch,
      ),
    ),
    readSecret: await statusOf(core.readNamespacedSecret({ name: "portico-memberlist", namespace: ns })),
    getService: await statusOf(core.readNamespacedService({ name: "web", namespace: ns })),
  };
  expect(refused).toEqual({
    patchServiceStatus: 403,
    patchNode: 403,
    patchPool: 403,
    readSecret: 403,
    getService: 403,
  });
});
