// Bad input: a clear Warning Event and condition naming the field and the fix, nothing half-made in ARM, and
// every other Service unaffected. And Azure's documented limits: a Service that would go past one is refused
// before anything of it is made, and the Services already served keep their addresses.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DOCUMENTED_LIMITS, type Limits } from "../../emulators/azure/index.ts";
import {
  expect,
  expectRefused,
  readyCondition,
  test,
  waitForNotReady,
  type TestAzure,
  type TestCluster,
} from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, podIP, serviceEvents, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";
import { porticoctl } from "./porticoctl.ts";

const TARGET_TYPE = "portico.io/target-type";
const A = "service.beta.kubernetes.io/";
const empty = { loadBalancers: [], publicIps: [], securityRules: [] };

test("without node ports a Service gets pod targets; asking for instance targets then is refused and nothing is made", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createEndpointSlice(
    "pods",
    [{ ip: podIP(1), nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("pods", lbService(undefined, { allocateLoadBalancerNodePorts: false }));
  await cluster.createService("nodes", lbService(undefined, { allocateLoadBalancerNodePorts: false }), {
    [TARGET_TYPE]: "instance",
  });
  await expectRefused(cluster, "nodes", {
    reason: "NodePortsDisabled",
    mentions: ["spec.allocateLoadBalancerNodePorts", `${TARGET_TYPE}: ip`],
  });
  await waitForIP(cluster, "pods");
  const inv = await inventory(azure);
  expect(inv.loadBalancers).toHaveLength(1);
  expect(inv.loadBalancers[0]!.frontends).toHaveLength(1);
  expect(inv.loadBalancers[0]!.pools).toEqual([
    { name: inv.loadBalancers[0]!.frontends[0]!.name, addresses: [podIP(1)] },
  ]);
  expect(inv.loadBalancers[0]!.rules[0]).toMatchObject({ backendPort: 8080 });
  expect(inv.publicIps).toHaveLength(1);

  await patchService(cluster, "nodes", { metadata: { annotations: { [TARGET_TYPE]: "ip" } } });
  await waitForIP(cluster, "nodes");
  expect(await readyCondition(cluster, "nodes")).toMatchObject({ status: "True", reason: "Provisioned" });
});

test.for([
  ["an unknown target type", { [TARGET_TYPE]: "pod" }, "InvalidAnnotation", TARGET_TYPE],
  [
    "internal that is not a boolean",
    { [`${A}azure-load-balancer-internal`]: "yes" },
    "InvalidAnnotation",
    "internal",
  ],
  [
    "an idle timeout out of range",
    { [`${A}azure-load-balancer-tcp-idle-timeout`]: "2" },
    "InvalidAnnotation",
    "idle-timeout",
  ],
  [
    "a probe protocol ARM has not",
    { [`${A}azure-load-balancer-health-probe-protocol`]: "udp" },
    "InvalidAnnotation",
    "health-probe-protocol",
  ],
  [
    "probes that take longer than 120 seconds to fail",
    {
      [`${A}azure-load-balancer-health-probe-interval`]: "60",
      [`${A}azure-load-balancer-health-probe-num-of-probe`]: "3",
    },
    "InvalidAnnotation",
    "120 seconds",
  ],
  [
    "a public IP prefix that is not a resource ID",
    { [`${A}azure-pip-prefix-id`]: "/subscriptions/x/prefix" },
    "InvalidAnnotation",
    "azure-pip-prefix-id",
  ],
  [
    "a public IP name on an internal Service",
    { [`${A}azure-load-balancer-internal`]: "true", [`${A}azure-pip-name`]: "x" },
    "InvalidAnnotation",
    "azure-pip-name",
  ],
  [
    "an address no public IP has",
    { [`${A}azure-load-balancer-ipv4`]: "20.1.2.3" },
    "PublicIPNotFound",
    "azure-load-balancer-ipv4",
  ],
  [
    "a subnet the virtual network does not have",
    { [`${A}azure-load-balancer-internal`]: "true", [`${A}azure-load-balancer-internal-subnet`]: "nope" },
    "SubnetNotFound",
    "internal-subnet",
  ],
  [
    "a private address outside the subnet",
    { [`${A}azure-load-balancer-internal`]: "true", [`${A}azure-load-balancer-ipv4`]: "10.0.9.9" },
    "AddressNotInSubnet",
    "azure-load-balancer-ipv4",
  ],
  [
    "floating IP to pods",
    { [TARGET_TYPE]: "ip", "portico.io/floating-ip": "true" },
    "FloatingIPNeedsNodes",
    "floating-ip",
  ],
  [
    "a service tag that is not one",
    { [`${A}azure-allowed-service-tags`]: "not a tag" },
    "InvalidAnnotation",
    "allowed-service-tags",
  ],
  [
    "a per-port setting that does not exist",
    { [`${A}port_80_health-probe_colour`]: "red" },
    "UnsupportedAnnotation",
    "port_80_health-probe_colour",
  ],
  [
    "a per-port setting for a port the Service does not have",
    { [`${A}port_8443_health-probe_protocol`]: "Http" },
    "InvalidAnnotation",
    "port_8443_health-probe_protocol",
  ],
] as const)(
  "%s is reported on the Service, naming the field, and nothing is made",
  async ([, annotations, reason, field], { cluster, azure }) => {
    await azureWorld(cluster, azure, 1);
    await startPortico(cluster, { provider: "azure" });
    await cluster.createService("bad", lbService(), annotations);
    await expectRefused(cluster, "bad", { reason, mentions: [field] });
    expect(await inventory(azure)).toEqual(empty);
  },
);

test("porticoctl doctor refuses a per-port annotation for a port the Service does not have, as the controller does", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const dir = await mkdtemp(join(tmpdir(), "portico-azure-doctor-"));
  cluster.defer(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, "azure.json");
  await writeFile(config, JSON.stringify(azure.config()));
  const key = `${A}port_8443_health-probe_protocol`;
  // No controller: doctor plans the Service itself, with the controller's own provider code.
  await cluster.createService("bad", lbService(), { [key]: "Http" });
  const doctor = await porticoctl(
    azure,
    "doctor",
    `${cluster.namespace}/bad`,
    "--cluster-name",
    cluster.namespace,
    "--azure-config",
    config,
  );
  expect(doctor.out).toContain(
    `✗ provider: metadata.annotations[${key}]: the Service has no port 8443; name one of its ports (80), or remove the annotation`,
  );
  expect(doctor.code).not.toBe(0);
  expect(await inventory(azure)).toEqual(empty);
});

test("SCTP, and source ranges without a security group to enforce them, are refused before any write", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, {
    provider: "azure",
    settings: azure.config({ securityGroupName: undefined }),
  });
  await cluster.createService("sctp", lbService([{ name: "s", port: 9000, protocol: "SCTP" }]));
  await cluster.createService(
    "ranges",
    lbService(undefined, { loadBalancerSourceRanges: ["203.0.113.0/24"] }),
  );
  await expectRefused(cluster, "sctp", {
    reason: "UnsupportedProtocol",
    mentions: ["spec.ports[0].protocol"],
  });
  await expectRefused(cluster, "ranges", {
    reason: "SourceRangesUnsupported",
    mentions: ["securityGroupName"],
  });
  const writes = Object.entries(await azure.requestCounts()).filter(
    ([op]) => !op.startsWith("GET") && !op.endsWith("token"),
  );
  expect(writes).toEqual([]);
});

const limits = (set: Partial<Limits>) => ({ limits: { ...DOCUMENTED_LIMITS, ...set } });
const onPort = (port: number) => lbService([{ name: "http", port, targetPort: 8080, protocol: "TCP" }]);

/** What exists in ARM of the Service with this UID: its public IP, load balancer parts and security rules. */
async function partsOf(azure: TestAzure, uid: string): Promise<string[]> {
  const fe = `a${uid.replace(/-/g, "")}`;
  const inv = await inventory(azure);
  const mine = (name: string) => name === fe || name.startsWith(`${fe}-`);
  return [
    ...inv.publicIps
      .filter((p) => p.tags["portico.io-service-uid"] === uid)
      .map((p) => `public IP ${p.name}`),
    ...inv.loadBalancers.flatMap((lb) => [
      ...lb.frontends.filter((f) => mine(f.name)).map((f) => `frontend ${f.name}`),
      ...lb.pools.filter((p) => mine(p.name)).map((p) => `pool ${p.name}`),
      ...lb.probes.filter((p) => mine(p.name)).map((p) => `probe ${p.name}`),
      ...lb.rules.filter((r) => mine(r.name) || r.frontend === fe).map((r) => `rule ${r.name}`),
      ...Object.keys(lb.tags)
        .filter((k) => k.endsWith(fe))
        .map((k) => `tag ${k}`),
    ]),
    ...inv.securityRules.filter((r) => mine(r.name)).map((r) => `security rule ${r.name}`),
  ];
}

/** Three Services, one port each, on two nodes; the third is the one past the limit. */
async function threeServices(
  cluster: TestCluster,
  opts: { annotations?: Readonly<Record<string, string>>; sourceRanges?: readonly string[] } = {},
) {
  const spec = (port: number) =>
    lbService(
      [{ name: "http", port, targetPort: 8080, protocol: "TCP" }],
      opts.sourceRanges ? { loadBalancerSourceRanges: [...opts.sourceRanges] } : {},
    );
  await cluster.createService("a", spec(80), { ...opts.annotations });
  const a = await waitForIP(cluster, "a");
  await cluster.createService("b", spec(81), { ...opts.annotations });
  const b = await waitForIP(cluster, "b");
  await cluster.createService("c", spec(82), { ...opts.annotations });
  return { a, b };
}

async function expectServed(cluster: TestCluster, served: Record<string, string>) {
  for (const [name, ip] of Object.entries(served)) {
    expect(await readyCondition(cluster, name)).toMatchObject({ status: "True", reason: "Provisioned" });
    expect((await cluster.getService(name)).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ip);
  }
}

// The emulator holds ARM to small limits here and Portico is configured with the same ones, so that the third
// one-port Service on two nodes would go past one. Portico refuses it before its first write: were the refusal
// ARM's, the Service's public IP (and on the security group's limits its frontend and rule) would be left.
test.for([
  [
    "frontends on the shared load balancer",
    { frontendIPConfigurationsPerLoadBalancer: 2 },
    {},
    "TooManyFrontends",
    "loadBalancerPerService",
    "delete Services",
  ],
  [
    "rules on the shared load balancer",
    { rulesPerLoadBalancer: 2 },
    {},
    "TooManyRules",
    "spec.ports",
    "use fewer ports",
  ],
  [
    "rules reaching one node",
    { rulesPerBackendAddress: 2 },
    {},
    "TooManyRulesPerBackend",
    // Instance targets by default: the Service carries no target-type annotation, its ports are what it adds.
    "spec.ports",
    `${TARGET_TYPE}: ip`,
  ],
  [
    "rules in the security group",
    { securityRulesPerGroup: 2 },
    {},
    "TooManySecurityRules",
    "spec.ports",
    "remove unused rules",
  ],
  // Floating IP: each rule names the frontend's one address, however the backends' addresses are written.
  [
    "addresses in the security group's rules",
    { addressPrefixesPerSecurityGroup: 2 },
    { annotations: { "portico.io/floating-ip": "true" }, sourceRanges: ["203.0.113.0/24"] },
    "TooManySecurityRuleAddresses",
    "spec.loadBalancerSourceRanges",
    "wider source ranges",
  ],
] as const)(
  "a Service past Azure's limit on %s is refused before anything of it is made; the Services before it keep theirs",
  async ([, set, opts, reason, field, fix], { cluster, azure }) => {
    await azureWorld(cluster, azure, 2);
    await azure.configure(limits(set));
    await startPortico(cluster, { provider: "azure", settings: azure.config({ limits: set }) });
    const served = await threeServices(cluster, opts);
    await expectRefused(cluster, "c", { reason, mentions: [field, fix] });
    expect((await cluster.getService("c")).status?.loadBalancer?.ingress ?? []).toEqual([]);
    expect(await partsOf(azure, (await cluster.getService("c")).metadata!.uid!)).toEqual([]);
    expect(await partsOf(azure, (await cluster.getService("a")).metadata!.uid!)).not.toEqual([]);
    await expectServed(cluster, served);
  },
);

// The quota counts public IPs of the whole subscription, which Portico does not read, so ARM refuses it; the
// public IP is the Service's first write, so nothing of it is made either.
test("a Service past the public IP quota is reported with ARM's code and nothing of it is made; the Services before it keep theirs", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  await azure.configure(limits({ publicIpAddressesPerRegion: 2 }));
  await startPortico(cluster, { provider: "azure" });
  const served = await threeServices(cluster);
  const refused = await waitForNotReady(cluster, "c");
  expect(refused.reason).toBe("CloudRejected");
  expect(refused.message).toContain("PublicIPCountLimitReached");
  expect(await serviceEvents(cluster, "c")).toContainEqual({
    type: "Warning",
    reason: "SyncLoadBalancerFailed",
    message: refused.message,
  });
  expect((await cluster.getService("c")).status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect(await partsOf(azure, (await cluster.getService("c")).metadata!.uid!)).toEqual([]);
  await expectServed(cluster, served);
});

test("tags ARM refuses on a Service's public IP are reported on the Service, and no public IP is made", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const PIP_TAGS = "service.beta.kubernetes.io/azure-pip-tags";
  await cluster.createService("long", onPort(80), { [PIP_TAGS]: `note=${"v".repeat(257)}` });
  const many = Array.from({ length: 50 }, (_, i) => `k${i}=v`).join(",");
  await cluster.createService("many", onPort(81), { [PIP_TAGS]: many });
  expect((await waitForNotReady(cluster, "long")).message).toContain("256");
  expect((await waitForNotReady(cluster, "many")).message).toContain("50");
  expect((await inventory(azure)).publicIps).toEqual([]);
});
