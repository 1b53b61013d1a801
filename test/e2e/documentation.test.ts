// The documentation, followed as a user follows it: every shell and YAML block of the README and docs/ is run or
// applied on the local cluster as its marker says (test/docs/blocks.ts), so a documented command that no longer
// works fails here. The commands run in a work directory holding a copy of the repository's manifests/ and the
// files the pages have the reader write (their own kustomizations, `file:` blocks), with the cluster's kubectl,
// helm, kustomize and porticoctl on the PATH; once all have run, the copy of manifests/ must be as it was: no
// documented step edits Portico's own files, which a reader would have to merge again at every update. The
// examples' own cluster is made first: the namespace `shop` with a Deployment and a LoadBalancer Service `web`
// that has its address, so `porticoctl doctor shop/web` and the like examine a real Service. Blocks whose marker
// says skip are listed with their reason.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { loadAllYaml } from "@kubernetes/client-node";
import { afterAll, beforeAll, inject } from "vitest";
import { buildPorticoctl } from "../../build/porticoctl.ts";
import { commandsOf, documentationBlocks, fileOf, SHELL, type DocBlock } from "../docs/blocks.ts";
import { describe, E2eNamespace, expect, test } from "../harness/e2e.ts";
import { helmBinary, kustomizeBinary } from "../harness/manifests.ts";
import { ensureTools } from "../harness/tools.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const run = promisify(execFile);
const blocks = documentationBlocks(ROOT);
const tested = blocks.filter((b) => b.mode && b.mode.kind !== "skip");
const YAML = new Set(["yaml", "yml"]);

/** A Service the `porticoctl plan -f service.yaml` example reads. */
const SERVICE_YAML = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  type: LoadBalancer
  loadBalancerClass: portico.io/metal
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8080
`;

describe("the documentation's commands and manifests, on the local cluster", () => {
  let work: string;
  let env: NodeJS.ProcessEnv;
  let values: Record<string, string>;
  let shop: E2eNamespace;
  /** The checksum of every file of the copy of manifests/, as copied. */
  let manifestSums: string;

  beforeAll(async () => {
    const context = inject("e2e");
    work = await mkdtemp(join(tmpdir(), "portico-docs-"));
    await cp(join(ROOT, "manifests"), join(work, "manifests"), { recursive: true, dereference: true });
    manifestSums = await checksums(join(work, "manifests"));
    await writeFile(join(work, "service.yaml"), SERVICE_YAML);
    const bin = join(work, ".bin");
    await mkdir(bin);
    const { kubectl } = await ensureTools("cluster");
    await symlink(kubectl, join(bin, "kubectl"));
    await symlink(await helmBinary(), join(bin, "helm"));
    await symlink(await kustomizeBinary(), join(bin, "kustomize"));
    // porticoctl as the pages have users install it: the one executable `make build` makes, named porticoctl and
    // kubectl-portico (kubectl's plugin). The Node.js running these tests is left off the PATH (the machine's own
    // may be older), so no documented command works only because it is there.
    await buildPorticoctl(bin, join(work, ".porticoctl"));
    const home = join(work, ".home");
    const path = [
      bin,
      ...(process.env.PATH ?? "").split(":").filter((d) => d && d !== dirname(process.execPath)),
    ];
    env = { PATH: path.join(":"), HOME: home, KUBECONFIG: context.kubeconfig, NO_COLOR: "1" };
    const image = context.porticoImage;
    const at = image.lastIndexOf(":");
    const repository = image.slice(0, at);
    values = {
      "<registry>": repository.slice(0, repository.lastIndexOf("/")),
      "<tag>": image.slice(at + 1),
      "<client ID>": "00000000-0000-0000-0000-000000000000",
    };
    expect(`${values["<registry>"]}/portico`, "the documentation's image is <registry>/portico").toBe(
      repository,
    );
    // The reader's own files, in place before any command of the page that uses them runs.
    for (const block of blocks) {
      if (block.mode?.kind !== "file") continue;
      const path = join(work, block.mode.path);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, fileOf(block.body, values));
    }

    shop = await E2eNamespace.create(context, "shop");
    await shop.deployEcho("web", 2);
    await shop.createLoadBalancer("web", "web");
    await shop.waitAvailable("web");
    await shop.waitForAddress("web");
    await shop.waitForServing("web", "True");
  }, 300_000);

  afterAll(async () => {
    await shop?.delete();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test("every block is run, applied or skipped with a reason", () => {
    expect(blocks.filter((b) => b.problem).map(where)).toEqual([]);
    expect(tested.length).toBeGreaterThan(0);
  });

  test.for(tested.map((b, i) => [where(b), b, i] as const))("%s", async ([, block, i]) => {
    const ns = `docs-${i}`;
    if (block.mode!.kind === "file") {
      const path = block.mode!.path;
      if (YAML.has(block.lang)) expect(loadAllYaml(fileOf(block.body, values)).length).toBeGreaterThan(0);
      else if (block.lang === "json") JSON.parse(fileOf(block.body, values));
      // Used: a command the same page runs (or dry-runs) after it names the file or its directory.
      const after = tested.filter(
        (b) => b.file === block.file && b.line > block.line && SHELL.has(b.lang) && b.mode!.kind !== "file",
      );
      const names = [path, dirname(path)].filter((n) => n !== ".");
      expect(
        after.some((b) => names.some((n) => b.body.includes(n))),
        `${where(block)}: no command after it on the page uses ${path}`,
      ).toBe(true);
      return;
    }
    if (YAML.has(block.lang)) {
      expect(block.mode!.kind, "a manifest is applied").toMatch(/^(apply|dry-run)$/);
      const dry = block.mode!.kind === "dry-run" ? ["--dry-run=server"] : [];
      await shell(`kubectl create namespace ${ns}`);
      try {
        const applied = await shell(`kubectl apply -n ${ns} ${dry.join(" ")} -f -`, block.body);
        expect(applied.stdout).toMatch(/(created|configured|unchanged)/);
      } finally {
        await shell(`kubectl delete -n ${ns} --ignore-not-found --timeout=120s -f -`, block.body);
        await shell(`kubectl delete namespace ${ns} --wait=false`);
      }
      return;
    }
    expect(SHELL.has(block.lang), `${where(block)}: only shell blocks and manifests are run`).toBe(true);
    const commands = commandsOf(block.body, values, block.mode!.kind === "dry-run");
    const result = await shell(commands.join("\n"));
    expect(result.code, `${commands.join("\n")}\n${result.stdout}\n${result.stderr}`).toBe(0);
  });

  test("no documented command changed Portico's own files", async () => {
    expect(await checksums(join(work, "manifests"))).toBe(manifestSums);
  });

  /** Runs a script with bash in the work directory; exit code and output, never throwing on a failure. */
  async function shell(
    script: string,
    stdin?: string,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const child = run("bash", ["-euo", "pipefail", "-c", script], {
      cwd: work,
      env,
      timeout: 300_000,
      maxBuffer: 16 << 20,
    });
    if (stdin !== undefined) child.child.stdin!.end(stdin);
    try {
      const { stdout, stderr } = await child;
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
      if (typeof e.code !== "number") throw err;
      return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
    }
  }
});

/** Every file under `dir` with its SHA-256, one per line, in order. */
async function checksums(dir: string): Promise<string> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const lines = await Promise.all(
    files.map(
      async (f) =>
        `${createHash("sha256")
          .update(await readFile(f))
          .digest("hex")} ${f}`,
    ),
  );
  return lines.join("\n");
}

function where(b: DocBlock): string {
  return `${b.file}:${b.line} (${b.lang}, ${b.mode?.kind ?? b.problem})`;
}
