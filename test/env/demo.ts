// `make demo`: brings up Portico's local environment — a real kube-apiserver + etcd, the AWS emulator, the
// Azure ARM emulator — runs the controllers, applies example Services for each provider and shows them
// converge with porticoctl; then, as root, a local cluster of real kubelet nodes running Portico's image,
// where a client on the LAN reaches pods through a LoadBalancer address. It keeps running until Ctrl-C so you can poke
// at it, with porticoctl as `make build` makes it. Its files are in a folder of its own under .cache/ (or
// PORTICO_CACHE), removed when it stops. PORTICO_DEMO_CLUSTER=0 leaves the local cluster out (it needs root).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { startController, type Controller } from "../../controller/app.ts";
import type { ControllerConfig } from "../../controller/config.ts";
import { createLogger } from "../../shared/log.ts";
import { TestAws } from "../harness/aws.ts";
import { EnvironmentError } from "../harness/errors.ts";
import { startEnvironment } from "../harness/environment.ts";
import { TestCluster } from "../harness/kube.ts";
import { createPool, installPoolCrd } from "../harness/pools.ts";
import { startAzureDemo } from "./demoAzure.ts";
import { startClusterDemo } from "./demoCluster.ts";
import { demoShell } from "./demoShell.ts";

const cache = process.env.PORTICO_CACHE ?? join(import.meta.dirname, "..", "..", ".cache");
const say = (text: string) => console.log(`\n\u001b[1m== ${text}\u001b[0m`);
/** Every Service's Serving verdict settles within this once its load balancer is made (see the wait below). */
const SETTLE_MS = 30_000;

async function main(): Promise<void> {
  await mkdir(cache, { recursive: true });
  const dir = await mkdtemp(join(cache, "demo-"));
  say(
    "Starting the local environment (the first run builds kube-apiserver and etcd; later runs take seconds)",
  );
  const env = await startEnvironment({ awsEndpoints: 1, azureEmulators: 1, dir });
  const aws = env.awsEndpoints[0]!;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: aws.url,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "demo",
    AWS_SECRET_ACCESS_KEY: "demo",
    KUBECONFIG: env.controlPlane.kubeconfig,
  });
  const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "demo");
  const ns = cluster.namespace;
  console.log(`  Kubernetes API ${env.controlPlane.server}, AWS emulator ${aws.url}, namespace ${ns}`);
  const azure = env.azureEndpoints[0]!;
  const azureConfig = join(dir, "azure.json");
  const shell = await demoShell(dir, env.tools.kubectl, [
    { KUBECONFIG: env.controlPlane.kubeconfig },
    {
      AWS_ENDPOINT_URL: aws.url,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "demo",
      AWS_SECRET_ACCESS_KEY: "demo",
    },
    { NODE_EXTRA_CA_CERTS: azure.caCertPath, ...azure.environment },
  ]);
  console.log(`  porticoctl built as make build builds it (one executable, no Node.js needed): ${shell.bin}`);

  say(
    "A small AWS cluster: a VPC with tagged subnets, three EC2 instances registered as Nodes, pods with endpoints",
  );
  const cloud = await TestAws.fresh();
  const network = await cloud.createNetwork(ns, { internal: true });
  await cloud.createNetworkSubnetsForRole(network.vpcId, ns, "kubernetes.io/role/elb");
  const instances = await cloud.createInstances(network.subnets[0]!.subnetId, 3);
  const nodes: string[] = [];
  for (const [i, inst] of instances.entries()) {
    const labels = { "demo.portico.io/cloud": "aws" };
    const node = await cluster.createNode(`node-${i}`, {
      providerID: inst.providerID,
      internalIP: inst.privateIp,
      labels,
    });
    nodes.push(node.metadata!.name!);
  }
  for (const [i, ip] of ["10.0.0.101", "10.0.0.102"].entries()) {
    await cluster.createPod(`web-${i}`, { labels: { app: "web" }, nodeName: nodes[i]!, podIP: ip });
  }
  const endpoints = [
    { ip: "10.0.0.101", nodeName: nodes[0] },
    { ip: "10.0.0.102", nodeName: nodes[1] },
  ];
  for (const svc of ["web", "web-local", "web-ip", "web-restricted", "broken", "web-azure", "api-azure"])
    await cluster.createEndpointSlice(svc, endpoints, [{ name: "http", port: 8080 }]);
  console.log(`  nodes ${nodes.join(", ")}; pods web-0 (10.0.0.101), web-1 (10.0.0.102)`);

  say("Running Portico's controllers: portico.io/aws-nlb, portico.io/azure-lb and portico.io/metal");
  const log = createLogger({ level: process.env.PORTICO_LOG_LEVEL ?? "error" });
  const base: ControllerConfig = {
    provider: "aws",
    clusterName: ns,
    loadBalancerClass: "portico.io/aws-nlb",
    defaultForUnclassed: false,
    namespace: ns,
    nodeSelector: `${cluster.nodeSelector},demo.portico.io/cloud=aws`,
    workers: 4,
    resyncPeriodMs: 300_000,
    orphanCollectionPeriodMs: 300_000,
    securityRuleCheckPeriodMs: 60_000,
    leaderElection: {
      enabled: true,
      namespace: ns,
      name: "portico-controller-aws",
      identity: "demo-aws",
      leaseDurationMs: 15000,
      renewDeadlineMs: 10000,
      retryPeriodMs: 2000,
    },
    metricsAddress: "127.0.0.1:0",
    settings: { defaultScheme: "internal", observationTtlMs: 60_000 },
  };
  const controllers: Controller[] = [await startController(base, cluster.kubeConfig, { log })];
  controllers.push(await startAzureDemo(cluster, azure, base, cluster.kubeConfig, log, azureConfig));
  await installPoolCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.200-192.0.2.209", "2001:db8::200-2001:db8::20f"] });
  controllers.push(
    await startController(
      {
        ...base,
        provider: "metal",
        loadBalancerClass: "portico.io/metal",
        // MetalLB's pools are not read: the demo has none.
        settings: { metallb: { mode: "off", namespace: "metallb-system" } },
        leaderElection: { ...base.leaderElection, enabled: false },
      },
      cluster.kubeConfig,
      { log },
    ),
  );

  say("Applying example Services");
  const http = [{ name: "http", port: 80, targetPort: 8080 }];
  const nlb = {
    type: "LoadBalancer",
    loadBalancerClass: "portico.io/aws-nlb",
    selector: { app: "web" },
    ports: http,
  };
  const examples: [string, object, Record<string, string>, string][] = [
    ["web", nlb, {}, "instance targets, externalTrafficPolicy Cluster (TCP health check on the node port)"],
    [
      "web-local",
      { ...nlb, externalTrafficPolicy: "Local" },
      {},
      "instance targets, Local (HTTP /healthz on the healthCheckNodePort)",
    ],
    [
      "web-ip",
      nlb,
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
      "ip targets: the pods themselves",
    ],
    [
      "web-restricted",
      { ...nlb, loadBalancerSourceRanges: ["10.0.0.0/8"] },
      { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" },
      "internet-facing, open to 10.0.0.0/8 only",
    ],
    [
      "dns-tcp",
      {
        type: "LoadBalancer",
        loadBalancerClass: "portico.io/metal",
        selector: { app: "dns" },
        ports: [{ name: "dns", port: 53, protocol: "TCP" }],
      },
      { "metallb.io/allow-shared-ip": "dns" },
      "bare metal: an address from the pool",
    ],
    [
      "dns-udp",
      {
        type: "LoadBalancer",
        loadBalancerClass: "portico.io/metal",
        selector: { app: "dns" },
        ports: [{ name: "dns", port: 53, protocol: "UDP" }],
      },
      { "metallb.io/allow-shared-ip": "dns" },
      "bare metal: shares dns-tcp's address (same sharing key)",
    ],
    [
      "web-azure",
      { ...nlb, loadBalancerClass: "portico.io/azure-lb", externalTrafficPolicy: "Local" },
      {},
      "Azure, Local: a frontend with its own static public IP, HTTP probe; its pods run on the AWS nodes",
    ],
    [
      "api-azure",
      { ...nlb, loadBalancerClass: "portico.io/azure-lb" },
      { "service.beta.kubernetes.io/azure-load-balancer-internal": "true" },
      "Azure: an internal frontend in the cluster's subnet",
    ],
    [
      "broken",
      { ...nlb, allocateLoadBalancerNodePorts: false },
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "instance" },
      "instance targets without node ports: refused, with the reason",
    ],
  ];
  for (const [name, spec, annotations, what] of examples) {
    await cluster.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name, annotations }, spec },
    });
    console.log(`  ${name.padEnd(13)} ${what}`);
  }

  // Converged: every Service reconciled, and no NLB's Serving still HealthChecksPending. The controller calls targets
  // it has just registered pending (on AWS they pass their first checks tens of seconds later) and looks again 5 s
  // on; the AWS emulator calls them healthy at once, so a status printed before that second look would show
  // HealthChecksPending beside healthy targets.
  say("Waiting for them to converge");
  const started = Date.now();
  let settled = false;
  while (!settled && Date.now() - started < 60_000 + SETTLE_MS) {
    await new Promise((r) => setTimeout(r, 250));
    const list = await cluster.core.listNamespacedService({ namespace: ns });
    const conditions = list.items.map((s) => s.status?.conditions ?? []);
    settled =
      conditions.length === examples.length &&
      conditions.every((c) => c.some((c) => c.type === "portico.io/LoadBalancerReady")) &&
      !conditions.some((c) =>
        c.some((c) => c.type === "portico.io/Serving" && c.reason === "HealthChecksPending"),
      );
  }
  console.log(
    settled
      ? `  converged in ${((Date.now() - started) / 1000).toFixed(1)} s`
      : `  not converged after ${((Date.now() - started) / 1000).toFixed(0)} s: the status below says what is left`,
  );

  say(`kubectl portico status -n ${ns} --azure-config ${azureConfig}`);
  await shell.run("kubectl", "portico", "status", "-n", ns, "--azure-config", azureConfig);
  console.log(
    `  web-azure's NoLocalEndpoints is meant: it is externalTrafficPolicy Local and its pods run on the AWS nodes, so no
  Azure node has one of them to send its traffic to (kube-proxy answers the probe with 503 there), and Portico says so.`,
  );
  say(`porticoctl doctor ${ns}/broken`);
  await shell.run("porticoctl", "doctor", `${ns}/broken`);

  say(
    "Bare metal for real: a local cluster of three kubelet nodes on a LAN of network namespaces, Portico's image and overlay",
  );
  const real =
    process.env.PORTICO_DEMO_CLUSTER === "0"
      ? "PORTICO_DEMO_CLUSTER=0"
      : process.getuid?.() === 0
        ? await startClusterDemo(dir, say).catch((err: Error) => `the local cluster failed: ${err.message}`)
        : "it needs root (network namespaces, containerd, kubelet); the emulator demo above is all there is";
  if (typeof real === "string") console.log(`  skipped: ${real}`);

  // Lines a user pastes into a new shell: they need nothing the demo's own process has (no Node.js).
  say(
    "Poke at it from another shell (kubectl there is the cluster's own release; kubectl portico is porticoctl)",
  );
  console.log(`${shell.exports.map((line) => `  ${line}`).join("\n")}
  kubectl portico status -n ${ns} --azure-config ${azureConfig}   # the tree above, live
  porticoctl doctor ${ns}/web-local
  kubectl -n ${ns} get services
  kubectl -n ${ns} delete service web                            # and watch the NLB go${
    typeof real === "string"
      ? ""
      : `
  kubectl --kubeconfig ${real.kubeconfig} get pods -A -o wide   # the local cluster`
  }

Files and logs are in ${dir}. Press Ctrl-C to stop; everything started here stops with it, and the folder goes.`);

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  console.log("\nStopping...");
  if (typeof real !== "string") await real.stop();
  for (const c of controllers) await c.stop();
  await cluster.cleanup();
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof EnvironmentError ? `portico: ${err.message}` : err);
    process.exit(1);
  },
);
