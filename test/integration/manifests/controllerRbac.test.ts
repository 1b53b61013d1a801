// The controller under the ServiceAccount and RBAC of the manifests, and nothing else: with a token the
// apiserver signed for that ServiceAccount it still does all its work (cluster-wide watches, finalizer,
// status, Events, a leader-election Lease, orphan collection), so the rules are enough; and it is refused
// everything it does not need, so they are no more than that.
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { ClusterCache } from "../../../controller/runtime/cache.ts";
import type { ControllerConfig } from "../../../controller/config.ts";
import { controllerEvents } from "../../../controller/events.ts";
import { silentLogger } from "../../../shared/log.ts";
import { mergePatch } from "../../../shared/patch.ts";
import { startPortico } from "../../harness/controller.ts";
import { expect, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { installCrds, renderOverlay, statusOf } from "../../harness/manifests.ts";
import { awsWorld, lbService, serviceEvents, waitForHostname } from "../aws/fixtures.ts";
import { inventory } from "../aws/inventory.ts";
import { allowedVerbs, installRbac, type Grant } from "./access.ts";

const SA = "portico-controller";

/**
 * The controller as the Deployment runs it: leader election on, every namespace watched. A class of the test's
 * own keeps it off other tests' Services, and the namespace as cluster name off their cloud resources.
 */
function asDeployed(cluster: TestCluster, identity: string, cls: string): Partial<ControllerConfig> {
  return {
    namespace: undefined,
    loadBalancerClass: cls,
    leaderElection: {
      enabled: true,
      namespace: cluster.namespace,
      name: "portico-controller",
      identity,
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 250,
    },
  };
}

async function gone(cluster: TestCluster, name: string): Promise<boolean> {
  return (await statusOf(cluster.getService(name))) === 404;
}

test("under its own ServiceAccount the controller makes, reports and deletes a load balancer, leading on a Lease", async ({
  cluster,
  aws,
}) => {
  const kc = await installRbac(cluster, "eks", SA);
  await awsWorld(cluster, aws, 2);
  const cls = `portico.io/rbac-${randomBytes(3).toString("hex")}`;
  const controller = await startPortico(cluster, asDeployed(cluster, "replica-a", cls), { kubeConfig: kc });
  await waitFor("the controller to lead", () => controller.isLeader());
  const lease = await cluster.coordination.readNamespacedLease({
    name: "portico-controller",
    namespace: cluster.namespace,
  });
  expect(lease.spec?.holderIdentity).toBe("replica-a");

  await cluster.createService("web", lbService(undefined, { loadBalancerClass: cls }));
  const hostname = await waitForHostname(cluster, "web");
  expect((await inventory(aws)).loadBalancers.map((lb) => lb.dnsName)).toEqual([hostname]);
  const svc = await cluster.getService("web");
  expect(svc.metadata!.finalizers).toContain("service.kubernetes.io/load-balancer-cleanup");
  expect(svc.status?.conditions?.find((c) => c.type === "portico.io/LoadBalancerReady")?.status).toBe("True");
  const reasons = (await serviceEvents(cluster, "web")).map((e) => e.reason);
  expect(reasons).toEqual(expect.arrayContaining(["EnsuringLoadBalancer", "EnsuredLoadBalancer"]));

  // The Lease is renewed under the ServiceAccount too.
  const renewed = await waitFor("a renewal", async () => {
    const now = await cluster.coordination.readNamespacedLease({
      name: "portico-controller",
      namespace: cluster.namespace,
    });
    return now.metadata!.resourceVersion !== lease.metadata!.resourceVersion ? now : undefined;
  });
  expect(renewed.spec?.holderIdentity).toBe("replica-a");

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("the Service to be gone", () => gone(cluster, "web"));
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
  const after = (await serviceEvents(cluster, "web")).map((e) => e.reason);
  expect(after).toEqual(expect.arrayContaining(["DeletingLoadBalancer", "DeletedLoadBalancer"]));
});

test("under its own ServiceAccount a restarted controller takes the Lease over and collects orphans", async ({
  cluster,
  aws,
}) => {
  const kc = await installRbac(cluster, "eks", SA);
  await awsWorld(cluster, aws, 1);
  const cls = `portico.io/rbac-${randomBytes(3).toString("hex")}`;
  const first = await startPortico(cluster, asDeployed(cluster, "replica-a", cls), { kubeConfig: kc });
  await cluster.createService("web", lbService(undefined, { loadBalancerClass: cls }));
  await waitForHostname(cluster, "web");
  await first.stop();

  // Deleted while no controller runs, its finalizer removed by hand: the NLB is an orphan.
  await cluster.core.patchNamespacedService(
    { name: "web", namespace: cluster.namespace, body: { metadata: { finalizers: null } } },
    mergePatch,
  );
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("the Service to be gone", () => gone(cluster, "web"));
  expect((await inventory(aws)).loadBalancers).toHaveLength(1);

  const second = await startPortico(cluster, asDeployed(cluster, "replica-b", cls), { kubeConfig: kc });
  await waitFor("the new replica to lead", () => second.isLeader());
  const lease = await cluster.coordination.readNamespacedLease({
    name: "portico-controller",
    namespace: cluster.namespace,
  });
  expect(lease.spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 });
  await waitFor("the orphaned NLB to be deleted", async () => {
    const inv = await inventory(aws);
    return inv.loadBalancers.length + inv.targetGroups.length + inv.securityGroups.length === 0;
  });
});

test("under its own ServiceAccount a repeated Event is counted on one object", async ({ cluster }) => {
  const kc = await installRbac(cluster, "eks", SA);
  const svc = await cluster.createService("web", lbService());
  const events = controllerEvents(kc.makeApiClient(CoreV1Api), silentLogger());
  await events.record(svc, "Warning", "SyncLoadBalancerFailed", "the same failure");
  await events.record(svc, "Warning", "SyncLoadBalancerFailed", "the same failure");
  const recorded = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: "involvedObject.name=web",
  });
  expect(recorded.items.map((e) => ({ reason: e.reason, count: e.count }))).toEqual([
    { reason: "SyncLoadBalancerFailed", count: 2 },
  ]);
});

test("the controller's ServiceAccount is refused what it does not need", async ({ cluster }) => {
  const kc = await installRbac(cluster, "eks", SA);
  const node = await cluster.createNode("n1");
  await cluster.createService("web", lbService());
  await cluster.createPod("app", { nodeName: node.metadata!.name!, podIP: "10.0.0.9" });
  const core = kc.makeApiClient(CoreV1Api);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const ns = cluster.namespace;
  const refused = {
    deleteService: await statusOf(core.deleteNamespacedService({ name: "web", namespace: ns })),
    createService: await statusOf(
      core.createNamespacedService({
        namespace: ns,
        body: { metadata: { name: "x" }, spec: { ports: [{ port: 1 }] } },
      }),
    ),
    replaceService: await statusOf(
      core.replaceNamespacedService({ name: "web", namespace: ns, body: await cluster.getService("web") }),
    ),
    listSecrets: await statusOf(core.listNamespacedSecret({ namespace: ns })),
    readSecret: await statusOf(core.readNamespacedSecret({ name: "any", namespace: ns })),
    patchNode: await statusOf(
      core.patchNode({ name: node.metadata!.name!, body: { metadata: { labels: { x: "y" } } } }, mergePatch),
    ),
    patchNodeStatus: await statusOf(
      core.patchNodeStatus({ name: node.metadata!.name!, body: { status: {} } }, mergePatch),
    ),
    deleteNode: await statusOf(core.deleteNode({ name: node.metadata!.name! })),
    patchPod: await statusOf(
      core.patchNamespacedPod(
        { name: "app", namespace: ns, body: { metadata: { labels: { x: "y" } } } },
        mergePatch,
      ),
    ),
    deletePod: await statusOf(core.deleteNamespacedPod({ name: "app", namespace: ns })),
    listConfigMaps: await statusOf(core.listNamespacedConfigMap({ namespace: ns })),
    deleteEvents: await statusOf(core.deleteCollectionNamespacedEvent({ namespace: ns })),
    deleteLease: await statusOf(leases.deleteNamespacedLease({ name: "portico-controller", namespace: ns })),
    leaseElsewhere: await statusOf(
      leases.createNamespacedLease({
        namespace: "default",
        body: { metadata: { name: "portico-controller" } },
      }),
    ),
  };
  expect(refused).toEqual(Object.fromEntries(Object.keys(refused).map((k) => [k, 403])));
  // The refused writes did nothing.
  expect((await cluster.getService("web")).metadata!.name).toBe("web");
});

test("the controller's RBAC grants exactly the verbs it calls", async ({ cluster }) => {
  await installRbac(cluster, "eks", SA);
  const ns = cluster.namespace;
  const expected: Grant[] = [
    { group: "", resource: "services", verbs: ["get", "list", "watch", "patch"] },
    { group: "", resource: "services", namespace: "default", verbs: ["get", "list", "watch", "patch"] },
    { group: "", resource: "services", subresource: "status", verbs: ["patch"] },
    { group: "", resource: "nodes", verbs: ["list", "watch"] },
    { group: "", resource: "nodes", subresource: "status", verbs: [] },
    { group: "discovery.k8s.io", resource: "endpointslices", verbs: ["list", "watch"] },
    { group: "", resource: "endpoints", verbs: [] },
    { group: "", resource: "events", namespace: "default", verbs: ["create", "patch"] },
    { group: "events.k8s.io", resource: "events", verbs: [] },
    { group: "coordination.k8s.io", resource: "leases", namespace: ns, verbs: ["get", "create", "update"] },
    { group: "coordination.k8s.io", resource: "leases", namespace: "kube-system", verbs: [] },
    { group: "", resource: "secrets", verbs: [] },
    // The webhook's certificate, in the Secret the manifests make: read and renewed by name; no other Secret.
    { group: "", resource: "secrets", namespace: ns, verbs: [] },
    { group: "", resource: "secrets", namespace: ns, name: "portico-webhook-cert", verbs: ["get", "patch"] },
    { group: "", resource: "secrets", namespace: ns, name: "other", verbs: [] },
    {
      group: "admissionregistration.k8s.io",
      resource: "mutatingwebhookconfigurations",
      name: "portico-readiness-gates",
      verbs: ["get", "list", "patch"],
    },
    { group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", verbs: ["list"] },
    { group: "", resource: "configmaps", verbs: [] },
    { group: "", resource: "pods", verbs: ["get", "list", "watch"] },
    { group: "", resource: "pods", subresource: "status", verbs: ["patch"] },
    { group: "", resource: "pods", namespace: "default", verbs: ["get", "list", "watch"] },
    { group: "", resource: "namespaces", verbs: [] },
    { group: "portico.io", resource: "ipaddresspools", verbs: [] },
    { group: "portico.io", resource: "servicel2statuses", verbs: [] },
    { group: "portico.io", resource: "servicebgpstatuses", verbs: [] },
    { group: "metallb.io", resource: "ipaddresspools", verbs: [] },
    { group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verbs: [] },
    { group: "gateway.networking.k8s.io", resource: "gatewayclasses", verbs: ["get", "list", "watch"] },
    {
      group: "gateway.networking.k8s.io",
      resource: "gatewayclasses",
      subresource: "status",
      verbs: ["update", "patch"],
    },
    { group: "gateway.networking.k8s.io", resource: "gateways", verbs: [] },
    {
      group: "apiextensions.k8s.io",
      resource: "customresourcedefinitions",
      name: "gatewayclasses.gateway.networking.k8s.io",
      verbs: ["get"],
    },
    {
      group: "apiextensions.k8s.io",
      resource: "customresourcedefinitions",
      name: "gateways.gateway.networking.k8s.io",
      verbs: [],
    },
  ];
  expect(await allowedVerbs(cluster.kubeConfig, ns, SA, expected)).toEqual(expected);
});

test("on bare metal the controller also reads IPAddressPools and namespaces and writes pool status, no more", async ({
  cluster,
}) => {
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  const kc = await installRbac(cluster, "metal", SA);
  const ns = cluster.namespace;
  const expected: Grant[] = [
    { group: "portico.io", resource: "ipaddresspools", verbs: ["get", "list", "watch"] },
    { group: "portico.io", resource: "ipaddresspools", subresource: "status", verbs: ["patch"] },
    { group: "", resource: "namespaces", verbs: ["list", "watch"] },
    { group: "portico.io", resource: "servicel2statuses", verbs: ["list", "watch"] },
    { group: "portico.io", resource: "servicebgpstatuses", verbs: ["list", "watch"] },
    {
      group: "metallb.io",
      resource: "ipaddresspools",
      namespace: "metallb-system",
      verbs: ["list", "watch"],
    },
    { group: "metallb.io", resource: "ipaddresspools", subresource: "status", verbs: ["patch"] },
    { group: "metallb.io", resource: "l2advertisements", verbs: [] },
    {
      group: "apiextensions.k8s.io",
      resource: "customresourcedefinitions",
      name: "ipaddresspools.metallb.io",
      verbs: ["get"],
    },
    {
      group: "apiextensions.k8s.io",
      resource: "customresourcedefinitions",
      name: "ipaddresspools.portico.io",
      verbs: [],
    },
    { group: "", resource: "services", verbs: ["get", "list", "watch", "patch"] },
    { group: "", resource: "services", subresource: "status", verbs: ["patch"] },
    { group: "coordination.k8s.io", resource: "leases", namespace: ns, verbs: ["get", "create", "update"] },
    { group: "", resource: "secrets", verbs: [] },
  ];
  expect(await allowedVerbs(cluster.kubeConfig, ns, SA, expected)).toEqual(expected);

  // The controller's own cache, pools and namespaces included, syncs under the ServiceAccount.
  const cache = new ClusterCache(kc, silentLogger(), {
    nodeLabelSelector: cluster.nodeSelector,
    pools: true,
  });
  cluster.defer(() => cache.stop());
  await cache.start();
  expect(cache.namespaceLabels(ns)).toEqual({ "kubernetes.io/metadata.name": ns });
  // The speakers' records are read (none yet: an empty list, not "cannot read").
  expect(cache.announcements(ns, "web")).toEqual([]);

  // And it writes a pool's status the way providers/metal/poolStatus.ts does; the spec stays the user's.
  const pools = { group: "portico.io", version: "v1alpha1", plural: "ipaddresspools" } as const;
  const admin = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const name = `${ns}-pool`;
  await admin.createClusterCustomObject({
    ...pools,
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "IPAddressPool",
      metadata: { name },
      spec: { addresses: ["192.0.2.0/30"], serviceAllocation: { namespaces: [ns] } },
    },
  });
  cluster.defer(() => admin.deleteClusterCustomObject({ ...pools, name }).then(() => undefined));
  await waitFor("the cache to see the pool", () => cache.pools?.get(name));
  const asController = kc.makeApiClient(CustomObjectsApi);
  const status = { status: { assignedIPv4: "0", availableIPv4: "4" } };
  expect(
    await statusOf(asController.patchClusterCustomObjectStatus({ ...pools, name, body: status }, mergePatch)),
  ).toBe(0);
  const writes = {
    spec: await statusOf(
      asController.patchClusterCustomObject(
        { ...pools, name, body: { spec: { autoAssign: false } } },
        mergePatch,
      ),
    ),
    delete: await statusOf(asController.deleteClusterCustomObject({ ...pools, name })),
  };
  expect(writes).toEqual({ spec: 403, delete: 403 });
});
