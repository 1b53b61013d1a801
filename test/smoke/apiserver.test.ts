import { NODE_PORT_RANGE, SERVICE_CIDR } from "../harness/controlPlane.ts";
import { expect, test } from "../harness/index.ts";
import { Address4 } from "ip-address";

const [lowPort, highPort] = NODE_PORT_RANGE.split("-").map(Number) as [number, number];

test("a LoadBalancer Service gets a ClusterIP and NodePorts from the real apiserver", async ({ cluster }) => {
  const svc = await cluster.createService("web", {
    type: "LoadBalancer",
    selector: { app: "web" },
    ports: [
      { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
      { name: "dns", port: 53, protocol: "UDP" },
    ],
  });
  expect(new Address4(svc.spec!.clusterIP!).isInSubnet(new Address4(SERVICE_CIDR))).toBe(true);
  for (const port of svc.spec!.ports!) {
    expect(port.nodePort).toBeGreaterThanOrEqual(lowPort);
    expect(port.nodePort).toBeLessThanOrEqual(highPort);
  }
  expect(new Set(svc.spec!.ports!.map((p) => p.nodePort)).size).toBe(2);
  // Cluster policy: the apiserver allocates no health-check port.
  expect(svc.spec!.externalTrafficPolicy).toBe("Cluster");
  expect(svc.spec!.healthCheckNodePort).toBeUndefined();
});

test("externalTrafficPolicy Local gets a healthCheckNodePort; nodePorts can be turned off", async ({
  cluster,
}) => {
  const local = await cluster.createService("local", {
    type: "LoadBalancer",
    externalTrafficPolicy: "Local",
    selector: { app: "local" },
    ports: [{ port: 443, protocol: "TCP" }],
  });
  expect(local.spec!.healthCheckNodePort).toBeGreaterThanOrEqual(lowPort);
  expect(local.spec!.healthCheckNodePort).not.toBe(local.spec!.ports![0]!.nodePort);

  const noNodePorts = await cluster.createService("no-nodeports", {
    type: "LoadBalancer",
    allocateLoadBalancerNodePorts: false,
    selector: { app: "x" },
    ports: [{ port: 80, protocol: "TCP" }],
  });
  expect(noNodePorts.spec!.ports![0]!.nodePort).toBeUndefined();
});

test("Nodes and EndpointSlices made by the harness read back as a kubelet and the EndpointSlice controller would write them", async ({
  cluster,
}) => {
  const node = await cluster.createNode("n1", {
    providerID: "aws:///us-east-1a/i-0123456789abcdef0",
    internalIP: "10.0.0.10",
  });
  expect(node.spec!.providerID).toBe("aws:///us-east-1a/i-0123456789abcdef0");
  expect(node.status!.conditions!.find((c) => c.type === "Ready")!.status).toBe("True");
  expect(node.status!.addresses!.find((a) => a.type === "InternalIP")!.address).toBe("10.0.0.10");

  await cluster.createEndpointSlice(
    "web",
    [
      { ip: "10.244.0.5", nodeName: node.metadata!.name!, ready: true },
      { ip: "10.244.0.6", nodeName: node.metadata!.name!, ready: false, serving: true, terminating: true },
    ],
    [{ name: "http", port: 8080 }],
  );
  const slices = await cluster.discovery.listNamespacedEndpointSlice({
    namespace: cluster.namespace,
    labelSelector: "kubernetes.io/service-name=web",
  });
  expect(slices.items).toHaveLength(1);
  const conditions = slices.items[0]!.endpoints!.map((e) => [e.addresses[0], e.conditions]);
  expect(conditions).toEqual([
    ["10.244.0.5", { ready: true, serving: true, terminating: false }],
    ["10.244.0.6", { ready: false, serving: true, terminating: true }],
  ]);
});
