// Nothing ignored without a word, on each provider: a key of the family the provider reads that Portico does
// not implement is refused (Warning Event, False condition naming the key and what to do instead, nothing made);
// a misspelt key is refused with the key meant; a key Portico already behaves as asked by is accepted and
// told once; another cloud's key is not read.
import type { V1Service } from "@kubernetes/client-node";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { expect, expectRefused, mark, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { Controller } from "../../../controller/app.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { awsWorld, lbService, patchService, serviceEvents, waitForHostname } from "../aws/fixtures.ts";
import * as azureFixtures from "../azure/fixtures.ts";
import { inventory as azureInventory } from "../azure/inventory.ts";

const AWS = "service.beta.kubernetes.io/aws-load-balancer-";
const AZURE = "service.beta.kubernetes.io/azure-";

/** Changes the Service's labels a few times, each time waiting until the controller has reconciled again. */
async function reconcileAgain(cluster: TestCluster, controller: Controller, name: string): Promise<void> {
  for (const round of [1, 2, 3]) {
    const reconciled = await mark(controller.metrics.reconciles);
    await patchService(cluster, name, { metadata: { labels: { round: String(round) } } });
    await reconciled(`reconcile after label change ${round}`);
  }
}

async function eventCount(cluster: TestCluster, name: string, reason: string): Promise<number> {
  const list = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.filter((e) => e.reason === reason).reduce((n, e) => n + (e.count ?? 1), 0);
}

async function awsTagged(svc: V1Service) {
  const tagged = await new ResourceGroupsTaggingAPIClient({}).send(
    new GetResourcesCommand({
      TagFilters: [{ Key: "portico.io/service-uid", Values: [svc.metadata!.uid!] }],
    }),
  );
  return tagged.ResourceTagMappingList ?? [];
}

test("AWS: refused, misspelt and foreign keys", async ({ cluster, aws }) => {
  await awsWorld(cluster, aws, 1);
  const controller = await startPortico(cluster);

  const quic = await cluster.createService("quic", lbService(), { [`${AWS}quic-enabled-ports`]: "443" });
  await expectRefused(cluster, "quic", {
    reason: "UnsupportedAnnotation",
    mentions: [`${AWS}quic-enabled-ports`, "QUIC listeners are not offered"],
  });
  expect(await awsTagged(quic)).toEqual([]);

  const typo = await cluster.createService("typo", lbService(), { [`${AWS}shceme`]: "internet-facing" });
  await expectRefused(cluster, "typo", {
    reason: "UnsupportedAnnotation",
    mentions: [`${AWS}shceme`, `did you mean ${AWS}scheme?`],
  });
  expect(await awsTagged(typo)).toEqual([]);

  // Another cloud's key is not read, and a key Portico already behaves as asked by is told once.
  await cluster.createService("calm", lbService(), {
    [`${AZURE}pls-create`]: "true",
    [`${AWS}enable-tcp-udp-listener`]: "true",
  });
  await waitForHostname(cluster, "calm");
  await waitFor(
    "the no-op told",
    async () => (await eventCount(cluster, "calm", "AnnotationAccepted")) === 1,
  );
  const told = (await serviceEvents(cluster, "calm")).find((e) => e.reason === "AnnotationAccepted");
  expect(told?.type).toBe("Normal");
  expect(told?.message).toContain(`${AWS}enable-tcp-udp-listener`);
  await reconcileAgain(cluster, controller, "calm");
  expect(await eventCount(cluster, "calm", "AnnotationAccepted")).toBe(1);

  // Fixing the Service fixes it: the refused key removed, the load balancer is made.
  await patchService(cluster, "quic", { metadata: { annotations: { [`${AWS}quic-enabled-ports`]: null } } });
  await waitForHostname(cluster, "quic");
});

test("Azure: a cloud-provider-azure key Portico does not offer is refused and nothing is made", async ({
  cluster,
  azure,
}) => {
  await azureFixtures.azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("pls", azureFixtures.lbService(), { [`${AZURE}pls-create`]: "true" });
  await expectRefused(cluster, "pls", {
    reason: "UnsupportedAnnotation",
    mentions: [`${AZURE}pls-create`, "Private Link services are not offered"],
  });
  await cluster.createService("typo", azureFixtures.lbService(), { "portico.io/floating-ipp": "true" });
  await expectRefused(cluster, "typo", {
    reason: "UnsupportedAnnotation",
    mentions: ["portico.io/floating-ipp", "did you mean portico.io/floating-ip?"],
  });
  await cluster.createService("good", azureFixtures.lbService(), {
    [`${AWS}scheme`]: "internet-facing",
  });
  const ip = await azureFixtures.waitForIP(cluster, "good");
  // Only the good Service has a frontend: the refused ones made nothing.
  const frontends = (await azureInventory(azure)).loadBalancers.flatMap((lb) => lb.frontends);
  expect(frontends).toHaveLength(1);
  expect(ip).toBeTruthy();
});

test("bare metal: MetalLB's own record is read without a word, a Portico key for another provider is refused", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.64/30"] });
  await startPortico(cluster, { provider: "metal", loadBalancerClass: "portico.io/metal" });
  const spec = (): V1Service["spec"] => ({
    type: "LoadBalancer",
    loadBalancerClass: "portico.io/metal",
    selector: { app: "x" },
    ports: [{ name: "p", port: 80, protocol: "TCP" }],
  });
  await cluster.createService("moved", spec(), { "metallb.io/ip-allocated-from-pool": "old-pool" });
  await waitFor(
    "moved's address",
    async () => (await cluster.getService("moved")).status?.loadBalancer?.ingress?.[0]?.ip,
  );
  expect(await eventCount(cluster, "moved", "UnsupportedAnnotation")).toBe(0);

  await cluster.createService("floating", spec(), { "portico.io/floating-ip": "true" });
  await expectRefused(cluster, "floating", {
    reason: "UnsupportedAnnotation",
    mentions: ["portico.io/floating-ip", "applies only with the azure provider"],
  });
  expect((await cluster.getService("floating")).status?.loadBalancer?.ingress ?? []).toEqual([]);
});
