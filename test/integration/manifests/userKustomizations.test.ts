// The kustomizations docs/installation.md has readers write for themselves (its `file:` blocks, which include an
// overlay rather than edit it), built by the real kustomize beside a copy of manifests/ as the documentation
// test places them. Each renders every object of the overlay it includes, by kind, namespace and name, with the
// reader's image on every Portico container; a patch that restates the controller's arguments (a list a patch
// replaces whole) keeps every flag of the overlay, changing values only. So a flag added to an overlay fails
// here until the documented patch has it too, instead of silently going missing from readers' installations.
import {
  loadAllYaml,
  type KubernetesObject,
  type V1Deployment,
  type V1PodSpec,
} from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";
import { documentationBlocks, fileOf } from "../../docs/blocks.ts";
import { describe, expect, test } from "../../harness/index.ts";
import { kustomizeBinary, MANIFESTS, OVERLAYS } from "../../harness/manifests.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const VALUES = {
  "<registry>": "registry.test/team",
  "<tag>": "1.2.3",
  "<client ID>": "11111111-1111-1111-1111-111111111111",
};
const IMAGE = "registry.test/team/portico:1.2.3";

const kustomizations = documentationBlocks(ROOT).filter(
  (b) => b.mode?.kind === "file" && basename(b.mode.path) === "kustomization.yaml",
);

interface Kustomization {
  resources: string[];
  configMapGenerator?: { files?: string[] }[];
}

async function build(dir: string): Promise<KubernetesObject[]> {
  const { stdout } = await run(await kustomizeBinary(), ["build", dir], { maxBuffer: 16 << 20 });
  return loadAllYaml(stdout) as KubernetesObject[];
}

const key = (o: KubernetesObject) => `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;

function podSpecs(objects: KubernetesObject[]): [string, V1PodSpec][] {
  return objects
    .filter((o) => o.kind === "Deployment" || o.kind === "DaemonSet")
    .map((o) => [key(o), (o as V1Deployment).spec!.template.spec!]);
}

/** The controller's flags, without their values. */
function controllerFlags(objects: KubernetesObject[]): string[] {
  const deployment = objects.find((o) => o.kind === "Deployment") as V1Deployment;
  const container = deployment.spec!.template.spec!.containers.find((c) => c.name === "controller")!;
  return (container.args ?? []).map((a) => a.replace(/=.*/, "")).sort();
}

describe("the kustomizations docs/installation.md has readers write", () => {
  test("there is one for each overlay", () => {
    const included = kustomizations.map((b) => {
      const k = loadAllYaml(fileOf(b.body, VALUES))[0] as Kustomization;
      return basename(k.resources[0]!);
    });
    expect(included.sort()).toEqual([...OVERLAYS].sort());
  });

  test.for(kustomizations.map((b) => [`${b.file}:${b.line}`, b] as const))(
    "%s renders its overlay's objects with the reader's image and every flag of the overlay",
    async ([, block]) => {
      const path = (block.mode as { path: string }).path;
      const work = await mkdtemp(join(tmpdir(), "portico-user-kustomization-"));
      onTestFinished(() => rm(work, { recursive: true, force: true }));
      await cp(MANIFESTS, join(work, "manifests"), { recursive: true, dereference: true });
      const dir = join(work, dirname(path));
      await mkdir(dir, { recursive: true });
      const text = fileOf(block.body, VALUES);
      await writeFile(join(work, path), text);
      const kustomization = loadAllYaml(text)[0] as Kustomization;
      expect(kustomization.resources, "it includes one overlay").toHaveLength(1);
      const overlay = resolve(dir, kustomization.resources[0]!);
      expect(dirname(overlay)).toBe(join(work, "manifests", "overlays"));
      // Files a generator of the reader's replaces (azure.json) start as the overlay's, as the page copies them.
      for (const file of (kustomization.configMapGenerator ?? []).flatMap((g) => g.files ?? []))
        if (!existsSync(join(dir, file))) await cp(join(overlay, file), join(dir, file));

      const theirs = await build(dir);
      const portico = await build(overlay);
      expect(theirs.map(key).sort()).toEqual(portico.map(key).sort());
      for (const [name, spec] of podSpecs(theirs)) {
        const ours = podSpecs(portico).find(([n]) => n === name)![1];
        const containers = (s: V1PodSpec) => [...(s.initContainers ?? []), ...s.containers];
        expect(
          containers(spec).map((c) => [c.name, c.image]),
          `${name}: Portico's containers run the reader's image, the others keep theirs`,
        ).toEqual(containers(ours).map((c) => [c.name, c.image === "portico" ? IMAGE : c.image]));
      }
      expect(controllerFlags(theirs), "the controller's flags").toEqual(controllerFlags(portico));
    },
  );
});
