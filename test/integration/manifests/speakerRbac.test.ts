// The speaker's ServiceAccount and RBAC from the metal overlay: the speaker's own Kubernetes code (its
// list-watches, its Events, and in the BGP mode its peers' Secrets and their status) works under them, and
// nothing else is allowed.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Node } from "@kubernetes/client-node";
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
import { L2StatusWriter } from "../../../speaker/l2/statusWriter.ts";
import { PasswordSecrets } from "../../../speaker/bgp/passwords.ts";
import { planL2Statuses } from "../../../speaker/l2/statusPlan.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { speakerApi } from "../../harness/speakerApi.ts";
import { readReplacement } from "../../../speaker/kube/replacement.ts";
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
  const cache = new KubeCache(speakerApi(kc), pino({ level: "silent" }), {
    nodeSelector: cluster.nodeSelector,
  });
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

  const api = speakerApi(kc);
  // The speaker logs a failed Event and goes on; the test keeps what it logged so that a refusal shows here.
  const logged: string[] = [];
  const log = pino({ level: "warn" }, { write: (line: string) => void logged.push(line) });
  await recordNodeAssigned(api, log, svc, node, ["192.0.2.50"]);
  await recordNoMatchingNode(api, log, svc, node, [
    { address: "192.0.2.225", pool: pool.name, reason: "noMatchingNode" },
  ]);
  expect(logged).toEqual([]);
  const recorded = async () => {
    const events = await cluster.core.listNamespacedEvent({
      namespace: cluster.namespace,
      fieldSelector: "involvedObject.name=web",
    });
    return events.items.map((e) => [e.type, e.reason, e.source?.component]).sort();
  };
  const expected = [
    ["Normal", NODE_ASSIGNED, "portico-speaker"],
    ["Warning", NO_MATCHING_NODE, "portico-speaker"],
  ];
  await waitFor("both Events listed", async () =>
    JSON.stringify(await recorded()) === JSON.stringify(expected) ? true : undefined,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}; listed: ${JSON.stringify(await recorded())}`);
  });

  // Its ServiceL2Status record: created, overwritten when the announcement changes, deleted when it ends.
  const records = () => cache.l2Statuses().filter((r) => r.namespace === cluster.namespace);
  const writer = new L2StatusWriter(
    speakerApi(kc),
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

test("in the BGP mode it watches the peers, reads a peer's password Secret and writes its node's session", async ({
  cluster,
}) => {
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  const kc = await installRbac(cluster, "metal", SA);
  const admin = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const peer = `${cluster.namespace}-router`;
  const api = { group: "portico.io", version: "v1alpha1" } as const;
  await admin.createClusterCustomObject({
    ...api,
    plural: "bgppeers",
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "BGPPeer",
      metadata: { name: peer },
      spec: {
        myASN: 64512,
        peerASN: 64512,
        peerAddress: "192.0.2.2",
        passwordSecret: { name: "router-password" },
      },
    },
  });
  cluster.defer(() =>
    admin.deleteClusterCustomObject({ ...api, plural: "bgppeers", name: peer }).then(() => undefined),
  );
  const cache = new KubeCache(speakerApi(kc), pino({ level: "silent" }), {
    nodeSelector: cluster.nodeSelector,
    bgp: true,
  });
  cluster.defer(() => cache.stop());
  await cache.start();
  await waitFor("the speaker's cache to see the BGPPeer", () =>
    cache.bgpObjects()?.peers.some((p) => p.metadata?.name === peer) ? true : undefined,
  );

  // The password, from a Secret of its own namespace (where the DaemonSet's POD_NAMESPACE points it).
  await cluster.core.createNamespacedSecret({
    namespace: cluster.namespace,
    body: { metadata: { name: "router-password" }, stringData: { password: "s3cret" } },
  });
  let changed = 0;
  const passwords = new PasswordSecrets(speakerApi(kc), cluster.namespace, () => (changed += 1));
  passwords.get("router-password");
  await waitFor("the password read", () => (changed > 0 ? true : undefined));
  const read = passwords.get("router-password");
  expect({ password: read.password, problem: read.problem }).toEqual({
    password: "s3cret",
    problem: undefined,
  });

  // Its node's session, merge-patched into the status as bgp/announcer.ts writes it.
  const session = { state: "Established", established: true, prefixesSent: 2 };
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchClusterCustomObjectStatus(
      { ...api, plural: "bgppeers", name: peer, body: { status: { sessions: { n1: session } } } },
      mergePatch,
    );
  const written = (await admin.getClusterCustomObject({ ...api, plural: "bgppeers", name: peer })) as {
    spec: { peerAddress: string };
    status?: { sessions?: Record<string, unknown> };
  };
  expect(written.status?.sessions).toEqual({ n1: session });
  expect(written.spec.peerAddress).toBe("192.0.2.2");
});

test("the speaker's ServiceAccount may only read what it watches, create Events, write its peers' status and read Secrets, its pod and its DaemonSet in its namespace", async ({
  cluster,
}) => {
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
    { group: "portico.io", resource: "bgppeers", verbs: ["list", "watch"] },
    { group: "portico.io", resource: "bgppeers", subresource: "status", verbs: ["patch"] },
    {
      group: "portico.io",
      resource: "servicebgpstatuses",
      verbs: ["list", "watch", "create", "patch", "delete"],
    },
    { group: "portico.io", resource: "bgpadvertisements", verbs: ["list", "watch"] },
    { group: "portico.io", resource: "bgpadvertisements", subresource: "status", verbs: [] },
    { group: "portico.io", resource: "bfdprofiles", verbs: ["list", "watch"] },
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
    { group: "metallb.io", resource: "bgppeers", namespace: "metallb-system", verbs: ["list", "watch"] },
    {
      group: "metallb.io",
      resource: "bgpadvertisements",
      namespace: "metallb-system",
      verbs: ["list", "watch"],
    },
    { group: "metallb.io", resource: "bfdprofiles", namespace: "metallb-system", verbs: ["list", "watch"] },
    { group: "metallb.io", resource: "bgppeers", subresource: "status", verbs: [] },
    { group: "metallb.io", resource: "communities", namespace: "metallb-system", verbs: [] },
    { group: "", resource: "secrets", namespace: ns, verbs: ["get"] },
    { group: "", resource: "secrets", namespace: "metallb-system", verbs: [] },
    { group: "", resource: "secrets", verbs: [] },
    { group: "", resource: "pods", namespace: ns, verbs: ["get"] },
    { group: "", resource: "pods", verbs: [] },
    { group: "apps", resource: "daemonsets", namespace: ns, verbs: ["get"] },
    { group: "apps", resource: "daemonsets", verbs: [] },
  ];
  expect(await allowedVerbs(cluster.kubeConfig, ns, SA, expected)).toEqual(expected);

  // And the real calls are refused: it cannot move an address by writing a Service, a Node, a pool or a
  // peer, nor read Secrets beyond its namespace, nor list them.
  await installPoolCrd(cluster);
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  const pool = await createPool(cluster, "lan", { addresses: ["192.0.2.228/30"] });
  const node = (await cluster.createNode("n1")).metadata!.name!;
  await cluster.createService("web", { type: "ClusterIP", ports: [{ port: 80 }] });
  const admin = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const peer = `${ns}-peer`;
  await admin.createClusterCustomObject({
    group: "portico.io",
    version: "v1alpha1",
    plural: "bgppeers",
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "BGPPeer",
      metadata: { name: peer },
      spec: { myASN: 64512, peerASN: 64512, peerAddress: "192.0.2.2" },
    },
  });
  cluster.defer(() =>
    admin
      .deleteClusterCustomObject({ group: "portico.io", version: "v1alpha1", plural: "bgppeers", name: peer })
      .then(() => undefined),
  );
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const refused = {
    patchServiceStatus: await statusOf(
      core.patchNamespacedServiceStatus({ name: "web", namespace: ns, body: { status: {} } }, mergePatch),
    ),
    patchNode: await statusOf(
      core.patchNode({ name: node, body: { metadata: { labels: { x: "y" } } } }, mergePatch),
    ),
    patchPool: await statusOf(
      custom.patchClusterCustomObject(
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
    patchPeer: await statusOf(
      custom.patchClusterCustomObject(
        {
          group: "portico.io",
          version: "v1alpha1",
          plural: "bgppeers",
          name: peer,
          body: { spec: { peerAddress: "192.0.2.99" } },
        },
        mergePatch,
      ),
    ),
    readSecretElsewhere: await statusOf(core.readNamespacedSecret({ name: "any", namespace: "default" })),
    listSecrets: await statusOf(core.listNamespacedSecret({ namespace: ns })),
    getService: await statusOf(core.readNamespacedService({ name: "web", namespace: ns })),
  };
  expect(refused).toEqual({
    patchServiceStatus: 403,
    patchNode: 403,
    patchPool: 403,
    patchPeer: 403,
    readSecretElsewhere: 403,
    listSecrets: 403,
    getService: 403,
  });
});

test("on SIGTERM it reads its own pod and DaemonSet: a pod of an older template is replaced in place", async ({
  cluster,
}) => {
  const kc = await installRbac(cluster, "metal", SA);
  const ns = cluster.namespace;
  const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  const labels = { app: "speaker" };
  const template = { metadata: { labels }, spec: { containers: [{ name: "speaker", image: "portico" }] } };
  const ds = await apps.createNamespacedDaemonSet({
    namespace: ns,
    body: { metadata: { name: "speaker" }, spec: { selector: { matchLabels: labels }, template } },
  });
  // As the DaemonSet controller makes its pods (this apiserver runs no controllers): owned, labelled with the
  // template generation the apiserver set on the DaemonSet.
  const generation = ds.metadata!.annotations!["deprecated.daemonset.template.generation"]!;
  expect(generation).toBe("1");
  await cluster.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: {
        name: "speaker-abcde",
        labels: { ...labels, "pod-template-generation": generation },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "DaemonSet",
            name: "speaker",
            uid: ds.metadata!.uid!,
            controller: true,
          },
        ],
      },
      spec: template.spec,
    },
  });
  const node: V1Node = { metadata: { name: "n1" }, spec: {} };
  const pod = { name: "speaker-abcde", namespace: ns };
  // The pod is of the current template: stopping it is a departure.
  expect(await readReplacement(speakerApi(kc), pod, node)).toBeUndefined();
  await apps.patchNamespacedDaemonSet(
    {
      name: "speaker",
      namespace: ns,
      body: { spec: { template: { metadata: { annotations: { rev: "2" } } } } },
    },
    mergePatch,
  );
  expect(await readReplacement(speakerApi(kc), pod, node)).toBe(
    "DaemonSet speaker rolls from template generation 1 to 2",
  );
  // Its node cordoned for a drain: a departure whatever the DaemonSet does.
  expect(
    await readReplacement(speakerApi(kc), pod, { ...node, spec: { unschedulable: true } }),
  ).toBeUndefined();
});
