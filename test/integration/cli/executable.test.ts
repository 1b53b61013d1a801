// porticoctl as a user installs it: the single executable `make build` makes (build/porticoctl.ts), run from a
// shell whose PATH holds that executable and kubectl and nothing else — no Node.js of any version — as
// `kubectl portico` (kubectl's plugin) and as `porticoctl`, against the real apiserver and the AWS emulator: its
// version beside the running controller's, the status of a Service with its NLB and target health (the AWS
// provider and SDK load from inside the executable), and doctor's checks of it.
import { execFile } from "node:child_process";
import { access, constants, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, inject } from "vitest";
import { buildPorticoctl } from "../../../build/porticoctl.ts";
import { VERSION } from "../../../controller/version.ts";
import { expect, test } from "../../harness/index.ts";
import { ensureTools } from "../../harness/tools.ts";
import { awsWorld, lbService, waitForHostname } from "../aws/fixtures.ts";
import { leadingController } from "./leadingController.ts";

const execute = promisify(execFile);
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "portico-executable-"));
  const bin = join(dir, "bin");
  await buildPorticoctl(bin, join(dir, "work"));
  await symlink((await ensureTools("cluster")).kubectl, join(bin, "kubectl"));
  // What the documentation tells a user to have, and nothing more: no shell, no Node.js.
  env = {
    PATH: bin,
    HOME: join(dir, "home"),
    KUBECONFIG: inject("kubeconfig"),
    AWS_ENDPOINT_URL: process.env.AWS_ENDPOINT_URL,
    AWS_REGION: process.env.AWS_REGION,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
  };
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs a program found on the user's PATH alone, as their shell would. */
async function user(program: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const path = env.PATH!.split(":").map((d) => join(d, program));
  const found = await Promise.any(path.map((p) => access(p, constants.X_OK).then(() => p)));
  try {
    const { stdout } = await execute(found, args, { env, timeout: 60_000 });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

test("the PATH holds no Node.js: porticoctl runs on its own", async () => {
  for (const folder of env.PATH!.split(":")) expect(await readdir(folder)).not.toContain("node");
  expect(await readdir(env.PATH!)).toEqual(
    expect.arrayContaining(["kubectl", "kubectl-portico", "porticoctl"]),
  );
  const plugins = await user("kubectl", "plugin", "list");
  expect(plugins.out).toContain("kubectl-portico");
  const help = await user("kubectl", "portico", "--help");
  expect(help.code).toBe(0);
  expect(help.out).toMatch(/^ {2}kubectl portico status \[NAMESPACE\/NAME \| NAME\] {3}Portico Services/m);
});

test("kubectl portico version, status and doctor on a Service, from the executable alone", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await leadingController(cluster, "portico-controller");
  await cluster.createPod("web-1", { labels: { app: "web" }, nodeName: world.nodes[0]!, podIP: "10.0.0.90" });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.90", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  const hostname = await waitForHostname(cluster, "web");

  const version = await user("kubectl", "portico", "version");
  expect(version.out).toMatch(new RegExp(`^porticoctl ${VERSION.replaceAll(".", "\\.")}$`, "m"));
  expect(version.out).toContain(
    `controller ${cluster.namespace}/portico-controller (aws, portico.io/aws-nlb) ${VERSION}`,
  );

  const status = await user("kubectl", "portico", "status", "-n", cluster.namespace);
  expect(status.out).toContain(`${cluster.namespace}/web  aws  ${hostname}`);
  expect(status.out).toMatch(/NLB k8s-\S+ internal active/);
  expect(status.out).toMatch(new RegExp(`${world.instances[0]!.instanceId}:\\d+ healthy`));
  expect(status.code).toBe(0);

  const doctor = await user("porticoctl", "doctor", `${cluster.namespace}/web`);
  expect(doctor.out).toMatch(/✓ cloud targets: 1 of 1 targets healthy/);
  expect(doctor.out).not.toContain("✗");
  expect(doctor.code).toBe(0);
});
