// A provider is its folder and its line in providers/registry.ts, and nothing else. A copy of the code is given
// test/fixtures/exampleProvider/ as providers/example/ and the registry's import and entry for it — no other file
// changes — and then, from that copy: the code type-checks with the new provider, the controller serves a Service of
// its class against the real apiserver (address, conditions, its annotation catalog enforced), porticoctl lists it
// (its annotations, its Service's status) and the generated references document its flag and keys.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, inject } from "vitest";
import { ControllerProcess, scopedTo } from "../harness/controllerProcess.ts";
import { expectRefused, waitForServing } from "../harness/conditions.ts";
import { expect, test } from "../harness/index.ts";
import { waitFor } from "../harness/wait.ts";

const execute = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");
const ADDRESS = "192.0.2.77";
const CLASS = "portico.io/example";
let copy: string;
let registryChange: { before: string; after: string };

/** The production code and what the references are generated from, without tests. */
async function copyTheCode(into: string): Promise<void> {
  for (const part of ["controller", "providers", "shared", "speaker", "test/docs", "manifests/charts"])
    await cp(join(ROOT, part), join(into, part), {
      recursive: true,
      filter: (source) => !source.endsWith(".test.ts") && !source.includes("/native/build"),
    });
  for (const file of ["package.json", "tsconfig.json"]) await cp(join(ROOT, file), join(into, file));
  await symlink(join(ROOT, "node_modules"), join(into, "node_modules"));
}

/** The provider's line in the registry: its import beside the others', its entry beside theirs. */
function withExample(registry: string): string {
  const imported = registry.replace(
    'import { METAL } from "./metal/descriptor.ts";',
    'import { METAL } from "./metal/descriptor.ts";\nimport { EXAMPLE } from "./example/descriptor.ts";',
  );
  return imported.replace(
    "export const PROVIDERS = { aws: AWS, azure: AZURE, metal: METAL } as const;",
    "export const PROVIDERS = { aws: AWS, azure: AZURE, metal: METAL, example: EXAMPLE } as const;",
  );
}

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), "portico-new-provider-"));
  await copyTheCode(copy);
  await cp(join(ROOT, "test", "fixtures", "exampleProvider"), join(copy, "providers", "example"), {
    recursive: true,
  });
  const registry = join(copy, "providers", "registry.ts");
  const before = await readFile(registry, "utf8");
  await writeFile(registry, withExample(before));
  registryChange = { before, after: await readFile(registry, "utf8") };
}, 120_000);

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

const node = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  execute(process.execPath, args, {
    cwd: copy,
    env: { ...process.env, NO_COLOR: "1", ...env },
    timeout: 120_000,
  });

test("the registry changes by the provider's import and entry alone, and the code type-checks with it", async () => {
  const removed = registryChange.before
    .split("\n")
    .filter((l) => !registryChange.after.split("\n").includes(l));
  const added = registryChange.after
    .split("\n")
    .filter((l) => !registryChange.before.split("\n").includes(l));
  expect(removed).toHaveLength(1);
  expect(added).toEqual([
    'import { EXAMPLE } from "./example/descriptor.ts";',
    "export const PROVIDERS = { aws: AWS, azure: AZURE, metal: METAL, example: EXAMPLE } as const;",
  ]);
  // The fixture implements the interfaces as the compiler reads them, not only as Node.js strips them.
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  await expect(node([tsc, "-p", "tsconfig.json"])).resolves.toBeDefined();
}, 300_000);

test("the controller serves the new provider's class and enforces its annotations", async ({ cluster }) => {
  const logFile = join(copy, `controller-${cluster.namespace}.log`);
  const controller = await ControllerProcess.start({
    kubeconfig: inject("kubeconfig"),
    args: [
      "--provider",
      "example",
      "--example-address",
      ADDRESS,
      ...scopedTo(cluster),
      "--leader-elect=false",
    ],
    logFile,
    main: join(copy, "controller", "main.ts"),
  });
  cluster.defer(() => controller.stop());
  const spec = { type: "LoadBalancer", loadBalancerClass: CLASS, ports: [{ name: "web", port: 80 }] };
  await cluster.createService("web", spec, { "example.com/note": "hello" });
  await cluster.createService("refused", spec, { "example.com/unsupported": "yes" });
  await waitFor("the example provider's address on web", async () =>
    (await cluster.getService("web")).status?.loadBalancer?.ingress?.some((i) => i.ip === ADDRESS),
  );
  await waitForServing(cluster, "web");
  // The key the provider's catalog refuses is refused by the controller, as any provider's are.
  await expectRefused(cluster, "refused", {
    reason: "UnsupportedAnnotation",
    mentions: ["metadata.annotations[example.com/unsupported]", "the example does not do this"],
  });

  const status = await node([
    "controller/cli/porticoctl.ts",
    "status",
    `${cluster.namespace}/web`,
    "-o",
    "json",
    "--kubeconfig",
    inject("kubeconfig"),
  ]);
  // One Service asked for: its row, with what the provider's inspector shows of its load balancer.
  expect(JSON.parse(status.stdout)).toMatchObject({
    provider: "example",
    addresses: [ADDRESS],
    ready: "True",
    cloud: [{ label: "example load balancer for web" }],
  });
}, 180_000);

test("porticoctl and the generated references know the new provider", async () => {
  const help = await node(["controller/main.ts", "--help"]).catch(
    (err: { stdout: string; stderr: string }) => err,
  );
  expect(help.stdout + help.stderr).toContain("example (--provider example):\n  --example-address IP");
  const annotations = await node(["controller/cli/porticoctl.ts", "annotations", "example"]);
  expect(annotations.stdout).toMatch(/^Example \(example\.com\/\): 1 implemented, 0 no-op, 1 refused/m);
  expect(annotations.stdout).toContain("example.com/unsupported");
  // What `make docs` writes: the configuration reference and the annotation reference.
  const configuration = await node(["test/docs/configReference.ts"]);
  expect(configuration.stdout).toMatch(/\| `--example-address IP` \|.*\| example: the address every Service/);
  const markdown = await node(["controller/cli/porticoctl.ts", "annotations", "-o", "markdown"]);
  expect(markdown.stdout).toContain("example.com/note");
  expect(markdown.stdout).toContain("example.com/unsupported");
});
