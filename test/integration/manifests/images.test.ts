// One image setting reaches every Portico container: the controller and the speaker name the same image,
// and nothing in the manifests renames it, so a user's `images:` entry (in a kustomization that includes an
// overlay, or written into the overlay by `kustomize edit set image`) sets them all. The speaker's FRR
// containers (FRR, its agent, the init container copying FRR's files) name upstream's FRR image, which an
// entry of its own sets (a mirror of it, or the local cluster's stand-in), and Portico's entry leaves alone.
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

const FRR_IMAGE = "quay.io/frrouting/frr:8.4.2";
const FRR_CONTAINERS = [
  "DaemonSet/portico-speaker/frr-files",
  "DaemonSet/portico-speaker/frr",
  "DaemonSet/portico-speaker/frr-agent",
];

/** Every container's image, Portico's and FRR's apart. */
function images(objects: KubernetesObject[]): { portico: Map<string, string>; frr: Map<string, string> } {
  const found = { portico: new Map<string, string>(), frr: new Map<string, string>() };
  for (const w of workloads(objects))
    for (const c of [...(w.template.spec?.initContainers ?? []), ...(w.template.spec?.containers ?? [])]) {
      const name = `${w.kind}/${w.name}/${c.name}`;
      (FRR_CONTAINERS.includes(name) ? found.frr : found.portico).set(name, c.image ?? "");
    }
  return found;
}

/** The FRR containers of the overlay (the metal one only), each with `image`. */
function frrExpected(overlay: string, image: string): Map<string, string> {
  return new Map(overlay === "metal" ? FRR_CONTAINERS.map((c) => [c, image]) : []);
}

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  test("as shipped, every container names the image `portico`, to be set by the user", async () => {
    const { portico, frr } = images(await renderOverlay(overlay));
    expect(portico.size).toBeGreaterThan(0);
    for (const [container, image] of portico)
      expect({ container, image }).toEqual({ container, image: "portico" });
    expect(frr).toEqual(frrExpected(overlay, FRR_IMAGE));
  });

  test("one images: entry in a kustomization that includes the overlay sets every container", async () => {
    const { portico, frr } = images(
      await renderOverlayWithImage(overlay, "registry.test:5000/team/portico:1.2.3"),
    );
    const expected = overlay === "metal" ? 2 : 1;
    expect(portico.size).toBe(expected);
    for (const [container, image] of portico)
      expect({ container, image }).toEqual({ container, image: "registry.test:5000/team/portico:1.2.3" });
    expect(frr).toEqual(frrExpected(overlay, FRR_IMAGE));
  });

  test("an images: entry for quay.io/frrouting/frr sets every FRR container, and only those", async () => {
    const { portico, frr } = images(
      await renderOverlayWithImage(overlay, "registry.test/portico:1.2.3", {
        images: [
          { name: "portico", newName: "registry.test/portico", newTag: "1.2.3" },
          { name: "quay.io/frrouting/frr", newName: "registry.test/mirror/frr", newTag: "8.4.7" },
        ],
      }),
    );
    for (const [container, image] of portico)
      expect({ container, image }).toEqual({ container, image: "registry.test/portico:1.2.3" });
    expect(frr).toEqual(frrExpected(overlay, "registry.test/mirror/frr:8.4.7"));
  });

  test("`kustomize edit set image portico=...` in the overlay sets every container", async () => {
    const copy = await mkdtemp(join(tmpdir(), "portico-manifests-"));
    onTestFinished(() => rm(copy, { recursive: true, force: true }));
    await cp(MANIFESTS, copy, { recursive: true });
    const kustomize = await kustomizeBinary();
    const dir = join(copy, "overlays", overlay);
    await run(kustomize, ["edit", "set", "image", "portico=registry.test/portico:9.9"], { cwd: dir });
    const { stdout } = await run(kustomize, ["build", dir], { maxBuffer: 16 << 20 });
    const { portico, frr } = images(loadAllYaml(stdout) as KubernetesObject[]);
    expect(portico.size).toBeGreaterThan(0);
    for (const [container, image] of portico)
      expect({ container, image }).toEqual({ container, image: "registry.test/portico:9.9" });
    expect(frr).toEqual(frrExpected(overlay, FRR_IMAGE));
  });
});
