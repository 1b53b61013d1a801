// One image setting reaches every Portico container: the controller and the speaker name the same image,
// and nothing in the manifests renames it, so a user's `images:` entry (in a kustomization that includes an
// overlay, or written into the overlay by `kustomize edit set image`) sets them all.
import { loadAllYaml, type KubernetesObject } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";
import { describe, expect, test } from "../../harness/index.ts";
import {
  kustomizeBinary,
  MANIFESTS,
  OVERLAYS,
  renderOverlay,
  renderOverlayWithImage,
} from "../../harness/manifests.ts";
import { workloads } from "./pods.ts";

const run = promisify(execFile);

function images(objects: KubernetesObject[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const w of workloads(objects))
    for (const c of [...(w.template.spec?.initContainers ?? []), ...(w.template.spec?.containers ?? [])])
      found.set(`${w.kind}/${w.name}/${c.name}`, c.image ?? "");
  return found;
}

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  test("as shipped, every container names the image `portico`, to be set by the user", async () => {
    const found = images(await renderOverlay(overlay));
    expect(found.size).toBeGreaterThan(0);
    for (const [container, image] of found)
      expect({ container, image }).toEqual({ container, image: "portico" });
  });

  test("one images: entry in a kustomization that includes the overlay sets every container", async () => {
    const found = images(await renderOverlayWithImage(overlay, "registry.test:5000/team/portico:1.2.3"));
    const expected = overlay === "metal" ? 2 : 1;
    expect(found.size).toBe(expected);
    for (const [container, image] of found)
      expect({ container, image }).toEqual({ container, image: "registry.test:5000/team/portico:1.2.3" });
  });

  test("`kustomize edit set image portico=...` in the overlay sets every container", async () => {
    const copy = await mkdtemp(join(tmpdir(), "portico-manifests-"));
    onTestFinished(() => rm(copy, { recursive: true, force: true }));
    await cp(MANIFESTS, copy, { recursive: true });
    const kustomize = await kustomizeBinary();
    const dir = join(copy, "overlays", overlay);
    await run(kustomize, ["edit", "set", "image", "portico=registry.test/portico:9.9"], { cwd: dir });
    const { stdout } = await run(kustomize, ["build", dir], { maxBuffer: 16 << 20 });
    const found = images(loadAllYaml(stdout) as KubernetesObject[]);
    expect(found.size).toBeGreaterThan(0);
    for (const [container, image] of found)
      expect({ container, image }).toEqual({ container, image: "registry.test/portico:9.9" });
  });
});
