// The Helm chart renders what the kustomize overlays render. For each overlay, `helm template` with the values a
// user passes for it (chartArgs: provider, cluster name, cloud identity) gives the same objects, compared
// parsed, field by field, as `kustomize build manifests/overlays/<name>`. Ignored, and only these:
//  - the labels Helm's convention adds to every object's metadata (not to pod templates or selectors):
//    helm.sh/chart, app.kubernetes.io/managed-by and app.kubernetes.io/instance, which say which chart
//    and which release own the object; their values are checked instead;
//  - on the CRDs, the app.kubernetes.io/part-of label that kustomize adds when it renders base/crds: Helm
//    installs crds/ files verbatim, without templating, and the chart's files are the base's byte for byte.
// The chart's CRDs are the same files as manifests/base/crds (a test fails when one is edited without the other).
import type { KubernetesObject } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";
import { loadAllYaml } from "@kubernetes/client-node";
import { describe, expect, test } from "../../harness/index.ts";
import {
  CHART,
  chartArgs,
  MANIFESTS,
  OVERLAYS,
  renderChart,
  renderOverlay,
  runHelm,
} from "../../harness/manifests.ts";

const HELM_LABELS = {
  "helm.sh/chart": "portico-0.1.0",
  "app.kubernetes.io/managed-by": "Helm",
  "app.kubernetes.io/instance": "portico",
};

function key(o: KubernetesObject): string {
  return `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}

function withoutLabels(o: KubernetesObject, names: string[]): KubernetesObject {
  const copy = structuredClone(o);
  const labels = copy.metadata?.labels;
  if (labels) {
    for (const name of names) delete labels[name];
    if (Object.keys(labels).length === 0) delete copy.metadata!.labels;
  }
  return copy;
}

function byKey(objects: KubernetesObject[]): Map<string, KubernetesObject> {
  return new Map(objects.map((o) => [key(o), o]));
}

test("the cached helm is the release test/helm/go.mod pins, stamped with its version", async () => {
  const goMod = readFileSync(join(import.meta.dirname, "..", "..", "helm", "go.mod"), "utf8");
  const pinned = /^\s*helm\.sh\/helm\/v4 (v\S+)/m.exec(goMod)?.[1];
  expect(pinned).toMatch(/^v4\.\d+\.\d+$/);
  const version = await runHelm(["version", "--template", "{{.Version}}"]);
  expect(version).toMatchObject({ code: 0, stdout: pinned });
});

test("without Go, setup.sh helm says so and how to install it, in one line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "portico-no-go-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  // A PATH with only what the script needs before it looks for Go.
  const bin = join(dir, "bin");
  mkdirSync(bin);
  for (const tool of ["bash", "dirname"]) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  const script = join(import.meta.dirname, "..", "..", "env", "setup.sh");
  const failed = await promisify(execFile)(join(bin, "bash"), [script, "helm"], {
    env: { PATH: bin, PORTICO_CACHE: join(dir, "cache") },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toMatch(/^portico: Go is not installed, so helm cannot be built: install Go .*\n$/);
});

test("the chart's crds/ holds exactly the CRDs of manifests/base/crds, byte for byte", () => {
  const base = join(MANIFESTS, "base", "crds");
  const crdFiles = readdirSync(base).filter(
    (f) =>
      f.endsWith(".yaml") &&
      (loadAllYaml(readFileSync(join(base, f), "utf8")) as KubernetesObject[]).some(
        (o) => o?.kind === "CustomResourceDefinition",
      ),
  );
  expect(crdFiles.length).toBeGreaterThan(0);
  expect(readdirSync(join(CHART, "crds")).sort()).toEqual(crdFiles.sort());
  for (const file of crdFiles) {
    const copy = readFileSync(join(CHART, "crds", file), "utf8");
    expect(copy, `${file}: copy manifests/base/crds/${file} into manifests/charts/portico/crds/`).toBe(
      readFileSync(join(base, file), "utf8"),
    );
  }
});

test("the chart's FRR agent is manifests/speaker/frr/portico-frr-agent.py itself, never a copy that could lag", () => {
  // Helm reads nothing outside the chart, so files/ holds a symbolic link, which Helm follows (and `helm
  // package` replaces by the file's content).
  const inChart = join(CHART, "files", "portico-frr-agent.py");
  expect(lstatSync(inChart).isSymbolicLink()).toBe(true);
  expect(realpathSync(inChart)).toBe(realpathSync(join(MANIFESTS, "speaker", "frr", "portico-frr-agent.py")));
});

describe.each(OVERLAYS)("the chart with the %s overlay's values", (overlay) => {
  test("passes helm lint --strict", async () => {
    const lint = await runHelm(["lint", "--strict", CHART, ...chartArgs(overlay)]);
    expect(lint.stdout + lint.stderr).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(lint.code).toBe(0);
  });

  test("renders the overlay's objects", async () => {
    // The CRDs are the metal overlay's only (Helm installs crds/ with every provider: see docs/installation.md's --skip-crds).
    const chart = await renderChart(chartArgs(overlay), { includeCrds: overlay === "metal" });
    const kustomized = await renderOverlay(overlay);

    for (const o of chart) {
      const labels = o.metadata?.labels ?? {};
      if (o.kind === "CustomResourceDefinition") continue;
      expect(labels, `${key(o)}'s Helm labels`).toMatchObject(HELM_LABELS);
    }
    const helmObjects = byKey(chart.map((o) => withoutLabels(o, Object.keys(HELM_LABELS))));
    const overlayObjects = byKey(
      kustomized.map((o) =>
        o.kind === "CustomResourceDefinition" ? withoutLabels(o, ["app.kubernetes.io/part-of"]) : o,
      ),
    );
    expect([...helmObjects.keys()].sort()).toEqual([...overlayObjects.keys()].sort());
    for (const [k, o] of overlayObjects) expect(helmObjects.get(k), k).toEqual(o);
  });
});
