// `make bench` (AWS part): cloud API calls per new Service, calls on a no-change resync, and the time for
// N Services × M nodes to get their hostname, against the local environment (real apiserver + moto).
import { KubeConfig } from "@kubernetes/client-node";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startController } from "../controller/app.ts";
import type { ControllerConfig } from "../controller/config.ts";
import { silentLogger } from "../controller/log.ts";
import type { AwsProvider } from "../providers/aws/provider.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestAws } from "../test/harness/aws.ts";
import { TestCluster } from "../test/harness/kube.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100);
const NODES = Number(process.env.BENCH_NODES ?? 20);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 8);
const MUTATING = /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke)/;

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const diff = (after: Map<string, number>, before: Map<string, number>) =>
  new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0));

async function main(): Promise<void> {
  const env = await startEnvironment({ awsEndpoints: 1 });
  try {
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: env.awsEndpoints[0]!.url,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "bench",
      AWS_SECRET_ACCESS_KEY: "bench",
    });
    const kc = new KubeConfig();
    kc.loadFromFile(env.controlPlane.kubeconfig);
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const aws = await TestAws.fresh();
    const network = await aws.createNetwork(cluster.namespace, { internal: true });
    const instances = await aws.createInstances(network.subnets[0]!.subnetId, NODES);
    for (const [i, inst] of instances.entries())
      await cluster.createNode(`n${i}`, { providerID: inst.providerID, internalIP: inst.privateIp });

    const config: ControllerConfig = {
      provider: "aws",
      clusterName: cluster.namespace,
      loadBalancerClass: "portico.io/aws-nlb",
      defaultForUnclassed: false,
      namespace: cluster.namespace,
      nodeSelector: cluster.nodeSelector,
      workers: WORKERS,
      resyncPeriodMs: 3_600_000,
      orphanCollectionPeriodMs: 3_600_000,
      leaderElection: {
        enabled: false,
        namespace: cluster.namespace,
        name: "bench",
        identity: "bench",
        leaseDurationMs: 15000,
        renewDeadlineMs: 10000,
        retryPeriodMs: 2000,
      },
      metricsAddress: "127.0.0.1:0",
      aws: { defaultScheme: "internal" },
    };
    const controller = await startController(config, kc, { log: silentLogger() });
    const calls = (controller.provider as AwsProvider).clients.calls;
    const svc = (name: string) => ({
      type: "LoadBalancer",
      loadBalancerClass: "portico.io/aws-nlb",
      selector: { app: name },
      ports: [{ name: "http", port: 80, targetPort: 8080 }],
    });
    const hostnames = async () =>
      (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.filter(
        (s) => s.status?.loadBalancer?.ingress?.[0]?.hostname,
      ).length;
    const settle = async (want: number) => {
      while ((await hostnames()) < want || controller.manager.queue.length > 0)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500));
      while (controller.manager.queue.length > 0) await new Promise((r) => setTimeout(r, 50));
    };

    // One Service alone: every call it costs, from creation until nothing more happens.
    let before = new Map(calls);
    await cluster.createService("single", svc("single"));
    await settle(1);
    const perService = diff(calls, before);

    // N Services at once.
    before = new Map(calls);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SERVICES }, (_, i) => cluster.createService(`s${i}`, svc(`s${i}`))),
    );
    await settle(SERVICES + 1);
    const convergeMs = performance.now() - started;
    const bulk = diff(calls, before);

    // A resync of everything with nothing changed.
    before = new Map(calls);
    for (const s of (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items)
      controller.manager.queue.add(`${cluster.namespace}/${s.metadata!.name}`);
    await settle(SERVICES + 1);
    const resync = diff(calls, before);
    await controller.stop();

    const mutating = (m: Map<string, number>) => sum(new Map([...m].filter(([k]) => MUTATING.test(k))));
    const results = {
      date: new Date().toISOString(),
      command: "make bench",
      environment: {
        services: SERVICES,
        nodes: NODES,
        workers: WORKERS,
        emulator: env.awsEndpoints[0]!.kind,
      },
      newService: {
        calls: sum(perService),
        mutatingCalls: mutating(perService),
        byOperation: Object.fromEntries(perService),
      },
      bulk: {
        services: SERVICES,
        seconds: +(convergeMs / 1000).toFixed(2),
        callsPerService: +(sum(bulk) / SERVICES).toFixed(1),
        mutatingPerService: +(mutating(bulk) / SERVICES).toFixed(1),
      },
      noChangeResync: {
        calls: sum(resync),
        callsPerService: +(sum(resync) / (SERVICES + 1)).toFixed(1),
        mutatingCalls: mutating(resync),
        byOperation: Object.fromEntries(resync),
      },
    };
    console.log(`
AWS NLB provider against ${results.environment.emulator} (${SERVICES} Services x ${NODES} nodes, ${WORKERS} workers)
  cloud calls for one new Service        ${results.newService.calls} (${results.newService.mutatingCalls} mutating)
  ${SERVICES} Services to a hostname         ${results.bulk.seconds} s, ${results.bulk.callsPerService} calls/Service
  no-change resync                       ${results.noChangeResync.callsPerService} calls/Service, ${results.noChangeResync.mutatingCalls} mutating in all
`);
    const dir = join(import.meta.dirname, "results");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "aws.json"), JSON.stringify(results, null, 2) + "\n");
  } finally {
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
