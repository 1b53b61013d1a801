// GatewayClasses on the real apiserver: Portico's metal controller marks the classes naming it Accepted (or
// refuses a parametersRef, naming the field), states the CRDs' version is supported, and leaves other
// controllers' classes alone; without the Gateway API CRDs it serves Services exactly as before.
// The absence is checked first: installing the CRDs is cluster-wide and lasts the run, and no other file does it.
import { ApiextensionsV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { METAL_LOAD_BALANCER_CLASS } from "../../../providers/classes.ts";
import { startPortico } from "../../harness/controller.ts";
import { installGatewayApi } from "../../harness/gatewayApi.ts";
import { expect, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { statusOf } from "../../harness/manifests.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

const CLASSES = { group: "gateway.networking.k8s.io", version: "v1", plural: "gatewayclasses" } as const;
const CRD = "gatewayclasses.gateway.networking.k8s.io";

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}
interface Class {
  metadata: { name: string; generation: number };
  status?: { conditions?: Condition[] };
}

const metal = (cluster: TestCluster) =>
  startPortico(cluster, { provider: "metal", loadBalancerClass: METAL_LOAD_BALANCER_CLASS });

async function createClass(cluster: TestCluster, name: string, spec: object): Promise<void> {
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({
    ...CLASSES,
    body: { apiVersion: "gateway.networking.k8s.io/v1", kind: "GatewayClass", metadata: { name }, spec },
  });
  cluster.defer(async () => {
    await custom.deleteClusterCustomObject({ ...CLASSES, name }).catch(() => undefined);
  });
}

async function readClass(cluster: TestCluster, name: string): Promise<Class> {
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  return (await custom.getClusterCustomObject({ ...CLASSES, name })) as Class;
}

function condition(gc: Class, type: string): Condition | undefined {
  return gc.status?.conditions?.find((c) => c.type === type);
}

test("without the Gateway API CRDs the controller still gives a LoadBalancer Service its address", async ({
  cluster,
}) => {
  const crds = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
  // The precondition of this test: nothing in this run installed Gateway API before it.
  expect(await statusOf(crds.readCustomResourceDefinition({ name: CRD }))).toBe(404);
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["198.51.100.200/30"] });
  await metal(cluster);
  await cluster.createService("web", {
    type: "LoadBalancer",
    loadBalancerClass: METAL_LOAD_BALANCER_CLASS,
    selector: { app: "web" },
    ports: [{ name: "http", protocol: "TCP", port: 80 }],
  });
  const ingress = await waitFor("web's address", async () => {
    const got = (await cluster.getService("web")).status?.loadBalancer?.ingress;
    return got?.length ? got.map((i) => i.ip) : undefined;
  });
  expect(ingress).toEqual(["198.51.100.200"]);
});

test("the metal controller accepts its GatewayClass, refuses a parametersRef and leaves other controllers' alone", async ({
  cluster,
}) => {
  await installGatewayApi(cluster.kubeConfig);
  const ns = cluster.namespace;
  const [plain, withRef, other] = [`${ns}-plain`, `${ns}-params`, `${ns}-other`];
  await metal(cluster);
  // The other controller's class first: once a later one has its status, the controller saw this one too.
  await createClass(cluster, other, { controllerName: "example.com/gateway-controller" });
  await createClass(cluster, withRef, {
    controllerName: METAL_LOAD_BALANCER_CLASS,
    parametersRef: { group: "", kind: "ConfigMap", name: "settings", namespace: ns },
  });
  await createClass(cluster, plain, { controllerName: METAL_LOAD_BALANCER_CLASS });

  const accepted = await waitFor("the plain class to be accepted", async () => {
    const gc = await readClass(cluster, plain);
    return condition(gc, "Accepted")?.status === "True" ? gc : undefined;
  });
  expect(condition(accepted, "Accepted")).toMatchObject({
    status: "True",
    reason: "Accepted",
    observedGeneration: accepted.metadata.generation,
  });
  expect(condition(accepted, "SupportedVersion")).toMatchObject({
    status: "True",
    reason: "SupportedVersion",
    message: "Gateway API v1.6.3 is supported",
    observedGeneration: accepted.metadata.generation,
  });

  const refused = await waitFor("the class with parameters to be refused", async () => {
    const gc = await readClass(cluster, withRef);
    return condition(gc, "Accepted")?.status === "False" ? gc : undefined;
  });
  expect(condition(refused, "Accepted")).toMatchObject({
    reason: "InvalidParameters",
    observedGeneration: refused.metadata.generation,
  });
  expect(condition(refused, "Accepted")!.message).toContain("remove spec.parametersRef");
  expect(condition(refused, "SupportedVersion")).toMatchObject({
    status: "True",
    reason: "SupportedVersion",
  });

  // Only the CRD's default (Accepted Unknown, Pending) on the other controller's class.
  const untouched = await readClass(cluster, other);
  expect(untouched.status?.conditions).toEqual([
    expect.objectContaining({ type: "Accepted", status: "Unknown", reason: "Pending" }),
  ]);

  // Removing the parametersRef is the fix the message names: the class is then accepted at its new generation.
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  await custom.patchClusterCustomObject({
    ...CLASSES,
    name: withRef,
    body: [{ op: "remove", path: "/spec/parametersRef" }],
  });
  const fixed = await waitFor("the fixed class to be accepted", async () => {
    const gc = await readClass(cluster, withRef);
    return condition(gc, "Accepted")?.status === "True" ? gc : undefined;
  });
  expect(condition(fixed, "Accepted")!.observedGeneration).toBe(refused.metadata.generation + 1);
  expect(fixed.metadata.generation).toBe(refused.metadata.generation + 1);
});
