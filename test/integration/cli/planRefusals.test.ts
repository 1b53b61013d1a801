// porticoctl plan and doctor refuse what the controller refuses, with the same words, and by the limits the leading
// controller publishes: a health check aimed where only UDP is served, source ranges past the security group's
// rule quota, a dualstack NLB in subnets without IPv6, and a target-group attribute the port's protocol rules out.
import { dumpYaml, type V1Service } from "@kubernetes/client-node";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inject } from "vitest";
import { main } from "../../../controller/cli/porticoctl.ts";
import { expect, test, waitForNotReady } from "../../harness/index.ts";
import type { TestCluster } from "../../harness/index.ts";
import { awsWorld, lbService } from "../aws/fixtures.ts";
import { leadingController } from "./leadingController.ts";
import { testTempDir } from "../../harness/tempDir.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const ranges = (n: number) =>
  Array.from({ length: n }, (_, i) => `10.${100 + Math.floor(i / 256)}.${i % 256}.0/24`);

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

async function plan(cluster: TestCluster, name: string, spec: V1Service["spec"], annotations = {}) {
  const dir = testTempDir("portico-plan-");
  const file = join(dir, `${name}.yaml`);
  const svc = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: cluster.namespace, annotations },
    spec,
  };
  await writeFile(file, dumpYaml(svc));
  return ctl("plan", "-f", file);
}

const REFUSED: [string, V1Service["spec"], Record<string, string>, string[]][] = [
  [
    "udp-http-check",
    lbService([{ name: "dns", port: 53, protocol: "UDP" }]),
    { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-port`]: "dns" },
    [`${A}healthcheck-port`, `${A}healthcheck-protocol: HTTP`, "which kube-proxy serves over UDP alone"],
  ],
  [
    "udp-traffic-port",
    lbService([{ name: "dns", port: 53, protocol: "UDP" }]),
    { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-port`]: "traffic-port" },
    [`${A}healthcheck-port`, "every target would be unhealthy"],
  ],
  [
    "many-ranges",
    lbService(
      [
        { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
        { name: "https", port: 443, targetPort: 8443, protocol: "TCP" },
      ],
      { loadBalancerSourceRanges: ranges(31) },
    ),
    {},
    ["spec.loadBalancerSourceRanges", "62 inbound IPv4 rules", "holds 60 per address family"],
  ],
  [
    "dualstack-v4-subnets",
    lbService(),
    { [`${A}ip-address-type`]: "dualstack" },
    [
      `metadata.annotations[${A}ip-address-type]`,
      "found by their kubernetes.io/role/internal-elb tag) have none",
    ],
  ],
  [
    "udp-client-ip-off",
    lbService([{ name: "dns", port: 53, protocol: "UDP" }]),
    { [`${A}target-group-attributes`]: "preserve_client_ip.enabled=false" },
    [`${A}target-group-attributes`, "preserve_client_ip.enabled=false cannot apply", "port 53 is UDP"],
  ],
];

test("plan shows the controller's refusals before anything exists, and doctor the same once it has refused", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await leadingController(cluster, "portico-controller-refusals");
  for (const [name, spec, annotations, mentions] of REFUSED) {
    const planned = await plan(cluster, name, spec, annotations);
    expect(planned.code, name).toBe(1);
    for (const text of mentions) expect(planned.out, name).toContain(text);
    expect(planned.out, name).not.toContain("create internal NLB");

    await cluster.createService(name, spec, annotations);
    const condition = await waitForNotReady(cluster, name);
    const doctor = await ctl("doctor", `${cluster.namespace}/${name}`);
    expect(doctor.code, name).toBe(1);
    expect(doctor.out, name).toContain(condition.message);
  }
});

test("plan counts rules against the quota the leading controller publishes", async ({ cluster, aws }) => {
  await awsWorld(cluster, aws, 1);
  await leadingController(cluster, "portico-controller-quota", {
    settings: { defaultScheme: "internal", observationTtlMs: 60_000, rulesPerSecurityGroup: 200 },
  });
  const planned = await plan(
    cluster,
    "seventy",
    lbService(undefined, { loadBalancerSourceRanges: ranges(70) }),
  );
  expect(planned.out).toMatch(/create security group \S+ \(70 ingress rules\)/);
  expect(planned.code).toBe(0);
});
