// porticoctl against the real apiserver and ARM emulator, run as a person runs it: its own process, reading the
// controller's azure.json, trusting the emulator's CA the way any Node process is told to (NODE_EXTRA_CA_CERTS).
import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { AZURE_WORLD, expect, test, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { TestAzure } from "../../harness/index.ts";
import { azureWorld, lbService, waitForIP } from "../azure/fixtures.ts";

const PORTICOCTL = join(import.meta.dirname, "..", "..", "..", "controller", "cli", "porticoctl.ts");
const HINT =
  "for the Azure load balancer's detail, give --azure-config FILE (the controller's azure.json) or set PORTICO_AZURE_CONFIG";

function porticoctl(
  azure: TestAzure,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  // A child reads NODE_EXTRA_CA_CERTS when it starts; this process's trust of the emulator does not carry over.
  const caCertPath = inject("azureEndpoints").find((e) => e.url === azure.url)!.caCertPath;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_EXTRA_CA_CERTS: caCertPath,
    NO_COLOR: "1",
    ...env,
  };
  if (!("PORTICO_AZURE_CONFIG" in env)) delete childEnv.PORTICO_AZURE_CONFIG;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PORTICOCTL, ...args, "--kubeconfig", inject("kubeconfig")],
      { env: childEnv, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, out: stdout + stderr });
      },
    );
  });
}

async function configFile(cluster: TestCluster, azure: TestAzure): Promise<string> {
  const file = join(tmpdir(), `porticoctl-azure-${cluster.namespace}.json`);
  await writeFile(file, JSON.stringify(azure.config()));
  cluster.defer(() => rm(file, { force: true }));
  return file;
}

test("status -o wide shows an Azure Service's frontend IP, rule, probe, pool addresses and allow rule; without the config it says how to get them", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  // A ready endpoint, so the Service serves (status exits 0 only for Services that are ready and serving).
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.64.10", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  const svc = await cluster.createService("web", lbService());
  const fe = `a${svc.metadata!.uid!.replace(/-/g, "")}`;
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  const ip = await waitForIP(cluster, "web");
  const file = await configFile(cluster, azure);

  const wide = await porticoctl(azure, [
    "status",
    `${cluster.namespace}/web`,
    "-o",
    "wide",
    "--azure-config",
    file,
  ]);
  expect(wide.out).toContain(`${cluster.namespace}/web  azure  ${ip}  Provisioned`);
  expect(wide.out).toContain(`load balancer ${cluster.namespace} (public, Standard)`);
  expect(wide.out).toContain(`frontend ${fe} ${ip}`);
  expect(wide.out).toContain(`public IP ${cluster.namespace}-${fe} (Portico's, tagged for this Service`);
  expect(wide.out).toContain(`rule TCP 80 → ${nodePort}, floating IP off, distribution Default`);
  expect(wide.out).toContain(`probe Tcp:${nodePort}`);
  expect(wide.out).toContain(`backend pool portico-nodes: 2 addresses`);
  for (const [i, nodeIP] of world.nodeIPs.entries())
    expect(wide.out).toContain(`address ${nodeIP} (${world.nodes[i]})`);
  expect(wide.out).toContain(`security group ${AZURE_WORLD.securityGroupName}`);
  expect(wide.out).toMatch(
    new RegExp(
      `allow TCP Internet → ${AZURE_WORLD.subnetPrefix.replace(/\./g, "\\.")}:${nodePort} \\(priority \\d+\\)`,
    ),
  );
  expect(wide.out).not.toContain(HINT);
  expect(wide.code).toBe(0);

  // The same configuration through the environment, as the controller takes it: doctor reads ARM too.
  const doctor = await porticoctl(
    azure,
    ["doctor", `${cluster.namespace}/web`, "--cluster-name", cluster.namespace],
    {
      PORTICO_AZURE_CONFIG: file,
    },
  );
  expect(doctor.out).toMatch(/✓ cloud: the cloud resources found hold nothing wrong/);
  expect(doctor.out).not.toMatch(/✗ provider/);
  expect(doctor.out).not.toContain(HINT);

  // Without the configuration, status still answers from Kubernetes and says how to see the Azure side.
  const plain = await porticoctl(azure, ["status", `${cluster.namespace}/web`, "-o", "wide"]);
  expect(plain.code).toBe(0);
  expect(plain.out).toContain(`${cluster.namespace}/web  azure  ${ip}  Provisioned`);
  expect(plain.out).toContain(`└─ ${HINT}`);
  expect(plain.out).not.toContain(`frontend ${fe}`);
  const json = JSON.parse(
    (await porticoctl(azure, ["status", `${cluster.namespace}/web`, "-o", "json"])).out,
  ) as {
    cloud: unknown[];
    hint?: string;
  };
  expect(json).toMatchObject({ cloud: [], hint: HINT });
});

test("a Service with nothing in ARM is a warning in the tree; an unreadable Azure config is a usage error", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  // No controller: nothing is made for the Service.
  const svc = await cluster.createService("web", lbService());
  const fe = `a${svc.metadata!.uid!.replace(/-/g, "")}`;
  const file = await configFile(cluster, azure);
  const out = await porticoctl(azure, ["status", `${cluster.namespace}/web`, "--azure-config", file]);
  expect(out.out).toContain(
    `no Azure load balancer has frontend ${fe} and no public IP is tagged for this Service`,
  );
  expect(out.code).toBe(1); // not ready

  await writeFile(file, JSON.stringify({ ...azure.config(), resourceGroup: 42 }));
  const bad = await porticoctl(azure, ["status", "--azure-config", file]);
  expect(bad).toMatchObject({ code: 2 });
  expect(bad.out).toContain(`--azure-config ${file}: Azure config "resourceGroup" must be a string`);
});

/** A DNS label unique to the test: ARM's rule allows 63 characters, not ending with "-". */
const dnsLabel = (prefix: string, namespace: string) =>
  `${prefix}-${namespace}`.slice(0, 60).toLowerCase().replace(/-+$/, "");

test("status -o wide shows the DNS name and the restricting rules of a Service that asks for them", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const label = dnsLabel("status", cluster.namespace);
  const svc = await cluster.createService("web", lbService(), {
    "service.beta.kubernetes.io/azure-dns-label-name": label,
    "service.beta.kubernetes.io/azure-allowed-ip-ranges": "203.0.113.0/24",
    "service.beta.kubernetes.io/azure-deny-all-except-load-balancer-source-ranges": "true",
  });
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  await waitForIP(cluster, "web");
  const file = await configFile(cluster, azure);
  const wide = await porticoctl(azure, [
    "status",
    `${cluster.namespace}/web`,
    "-o",
    "wide",
    "--azure-config",
    file,
  ]);
  expect(wide.out).toContain(`DNS name ${label}.${AZURE_WORLD.location}.cloudapp.azure.com`);
  const subnet = AZURE_WORLD.subnetPrefix.replace(/\./g, "\\.");
  expect(wide.out).toMatch(
    new RegExp(`allow TCP 203\\.0\\.113\\.0/24 → ${subnet}:${nodePort} \\(priority \\d+\\)`),
  );
  expect(wide.out).toMatch(new RegExp(`allow TCP AzureLoadBalancer → ${subnet}:${nodePort}`));
  expect(wide.out).toMatch(new RegExp(`deny TCP \\* → ${subnet}:${nodePort} \\(priority 4095\\)`));
  expect(wide.out).not.toContain("Internet");
});
