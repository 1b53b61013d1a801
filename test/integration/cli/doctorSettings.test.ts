// porticoctl without flags: the leading controller publishes its settings on its Lease, and status and doctor
// read the cluster name and node selector from there — judging targets exactly as the controller does.
import { dumpYaml, type V1Service } from "@kubernetes/client-node";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inject } from "vitest";
import { main } from "../../../controller/cli/porticoctl.ts";
import { SETTINGS_ANNOTATION } from "../../../controller/publishedSettings.ts";
import { mergePatch } from "../../../shared/patch.ts";
import { READY_CONDITION } from "../../../controller/status.ts";
import { expect, test, waitForNotReady, waitForServing } from "../../harness/index.ts";
import { awsWorld, lbService, waitForHostname } from "../aws/fixtures.ts";
import { leadingController } from "./leadingController.ts";
import { testTempDir } from "../../harness/tempDir.ts";

const LEASE = "portico-controller-doctor";

async function ctl(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const env = process.env.PORTICO_CLUSTER_NAME;
  delete process.env.PORTICO_CLUSTER_NAME;
  try {
    const code = await main([...args, "--kubeconfig", inject("kubeconfig")], (s) => (out += s));
    return { code, out };
  } finally {
    if (env !== undefined) process.env.PORTICO_CLUSTER_NAME = env;
  }
}

test("the leader publishes its settings; status and doctor need no --cluster-name", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await leadingController(cluster, LEASE);
  const lease = await cluster.coordination.readNamespacedLease({ name: LEASE, namespace: cluster.namespace });
  expect(JSON.parse(lease.metadata!.annotations![SETTINGS_ANNOTATION]!)).toMatchObject({
    provider: "aws",
    settings: { defaultScheme: "internal" },
    loadBalancerClass: "portico.io/aws-nlb",
    clusterName: cluster.namespace,
    namespace: cluster.namespace,
    nodeSelector: cluster.nodeSelector,
  });

  await cluster.createPod("web-1", { labels: { app: "web" }, nodeName: world.nodes[0]!, podIP: "10.0.0.90" });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.90", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await waitForServing(cluster, "web");

  const doctor = await ctl("doctor", `${cluster.namespace}/web`);
  expect(doctor.out).not.toContain("✗");
  expect(doctor.out).toContain(`served by ${cluster.namespace}/${LEASE} (cluster ${cluster.namespace}`);
  // Only this test's two nodes are targets: the controller's node selector leaves out every other node.
  expect(doctor.out).toMatch(/✓ nodes: 2 of \d+ nodes are targets/);
  expect(doctor.out).toMatch(/✓ provider: credentials work and the cloud matches the Service/);
  expect(doctor.code).toBe(0);

  // plan, too, plans as the controller does: its cluster name and node selector, so nothing is left to do.
  const dir = testTempDir("portico-plan-");
  const file = join(dir, "web.yaml");
  await writeFile(file, dumpYaml(await cluster.getService("web")));
  const plan = await ctl("plan", "-f", file);
  expect(plan.out).toContain("nothing to do");
  expect(plan.code).toBe(0);

  const status = await ctl("status", `${cluster.namespace}/web`);
  expect(status.out).toMatch(/NLB k8s-\S+ internal active/);
  expect(status.out).not.toContain("--cluster-name");
});

test("doctor applies the Service's target-node labels: no matching node, and a Local endpoint on a node that is no target", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await leadingController(cluster, LEASE);
  const [first, second] = world.nodes as [string, string];

  await cluster.createService("nowhere", lbService(), {
    "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "role=gpu",
  });
  await waitForHostname(cluster, "nowhere");
  const nowhere = await ctl("doctor", `${cluster.namespace}/nowhere`);
  expect(nowhere.code).toBe(1);
  expect(nowhere.out).toMatch(
    /✗ nodes: no node can take traffic; left out: .*\(not matched by service\.beta\.kubernetes\.io\/aws-load-balancer-target-node-labels "role=gpu"\)/,
  );
  expect(nowhere.out).toMatch(/fix: label nodes to match the selector named above/);

  await cluster.core.patchNode(
    { name: second, body: { metadata: { labels: { role: "edge" } } } },
    mergePatch,
  );
  await cluster.createPod("api-1", { labels: { app: "api" }, nodeName: first, podIP: "10.0.0.91" });
  await cluster.createEndpointSlice(
    "local",
    [{ ip: "10.0.0.91", nodeName: first }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService(
    "local",
    lbService(undefined, { externalTrafficPolicy: "Local", selector: { app: "api" } }),
    { "portico.io/target-node-labels": "role=edge" },
  );
  await waitForHostname(cluster, "local");
  const local = await ctl("doctor", `${cluster.namespace}/local`);
  expect(local.code).toBe(1);
  expect(local.out).toMatch(/✓ nodes: 1 of \d+ nodes are targets/);
  expect(local.out).toContain(
    `✗ health checks: externalTrafficPolicy Local: the ready endpoints run on ${first}, which are not targets`,
  );
});

test("doctor's fix for a failed reconcile fits its cause", async ({ cluster, aws }) => {
  await awsWorld(cluster, aws, 1);
  // No controller serves this class here, so the condition written below stays as written.
  await cluster.createService("flaky", lbService(undefined, { loadBalancerClass: "portico.io/azure-lb" }));
  const condition = (reason: string, message: string) => ({
    type: READY_CONDITION,
    status: "False",
    reason,
    message,
    lastTransitionTime: new Date(),
  });
  const setCondition = (reason: string, message: string) =>
    cluster.core.patchNamespacedServiceStatus(
      {
        name: "flaky",
        namespace: cluster.namespace,
        body: { status: { conditions: [condition(reason, message)] } },
      },
      mergePatch,
    );

  await setCondition("CloudUnavailable", "CreateLoadBalancer failed: ECONNREFUSED");
  const unavailable = await ctl("doctor", `${cluster.namespace}/flaky`);
  expect(unavailable.out).toMatch(/✗ last reconcile: CloudUnavailable: CreateLoadBalancer failed/);
  expect(unavailable.out).toMatch(
    /fix: the cloud API did not answer or throttled the controller; it retries on its own/,
  );
  expect(unavailable.out).not.toContain("change the field named above");

  await setCondition("CloudRejected", "AuthorizationFailed");
  expect((await ctl("doctor", `${cluster.namespace}/flaky`)).out).toMatch(
    /fix: the cloud refused the request/,
  );

  await setCondition("InvalidAnnotation", "metadata.annotations[x]: bad");
  expect((await ctl("doctor", `${cluster.namespace}/flaky`)).out).toMatch(
    /fix: change the field named above/,
  );
});

test("without a controller's settings or --cluster-name, doctor says it did not compare rather than raising a false alarm", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await cluster.createService("web", lbService());
  const { out } = await ctl("doctor", `${cluster.namespace}/web`);
  expect(out).toMatch(
    /! provider: the cloud was not compared with the Service: no running controller publishes/,
  );
  expect(out).toMatch(/fix: give --cluster-name/);
  expect(out).not.toContain("subnet");
  expect(out).not.toContain("cluster porticoctl");
});

// The demo's `broken` Service and the pairs the provider refuses: doctor reports the refusal the controller wrote,
// and no finding claims a path for traffic (no "ip targets", no nodes or health checks judged as if it were served).
test("doctor agrees with the controller on refused Services: the refusal, and no traffic path", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await leadingController(cluster, LEASE);
  const refused: [string, V1Service["spec"], Record<string, string>][] = [
    [
      "broken",
      lbService(undefined, { allocateLoadBalancerNodePorts: false }),
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "instance" },
    ],
    [
      "tls-on-udp",
      lbService([{ name: "dns", port: 53, protocol: "UDP" }]),
      {
        "service.beta.kubernetes.io/aws-load-balancer-ssl-cert":
          "arn:aws:acm:us-east-1:111122223333:certificate/x",
      },
    ],
    ["v6-ranges", lbService(undefined, { loadBalancerSourceRanges: ["2001:db8::/32"] }), {}],
  ];
  for (const [name, spec, annotations] of refused) {
    await cluster.createService(name, spec, annotations);
    const condition = await waitForNotReady(cluster, name);
    const doctor = await ctl("doctor", `${cluster.namespace}/${name}`);
    expect(doctor.code, name).toBe(1);
    expect(doctor.out, name).toContain(
      `✗ targets: none: the provider refuses the Service (${condition.message})`,
    );
    expect(doctor.out, name).not.toMatch(/✓ (nodes|health checks)|✓ .*ip targets/);
  }
});
