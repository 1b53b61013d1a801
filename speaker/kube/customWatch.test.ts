import { describe, expect, test } from "vitest";
import { KubeApi } from "./api/client.ts";
import { CustomWatch } from "./customWatch.ts";

function watchOf(quietWhenMissing: boolean) {
  const api = KubeApi.fromKubeconfig({
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
    users: [{ name: "u", user: {} }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
  return new CustomWatch(api, {
    group: "metallb.io",
    version: "v1beta1",
    plural: "ipaddresspools",
    namespace: "metallb-system",
    whenMissing: "not installed",
    missingRetryMs: 300_000,
    quietWhenMissing,
  });
}

describe("a watch of custom resources whose CRD may be missing", () => {
  test("404: none of them, listed as far as readiness goes, said once when quiet, retried rarely", () => {
    const watch = watchOf(true);
    expect(watch.listed()).toBe(false);
    expect(watch.failed(404)).toEqual({ newlyMissing: true, maxDelayMs: 300_000, log: "not installed" });
    expect(watch.missing()).toBe(true);
    expect(watch.listed()).toBe(true);
    expect(watch.list()).toEqual([]);
    expect(watch.failed(404)).toEqual({
      newlyMissing: false,
      maxDelayMs: 300_000,
      log: "not installed",
      quiet: true,
    });
  });

  test("a required kind's absence is said every time", () => {
    const watch = watchOf(false);
    watch.failed(404);
    expect(watch.failed(404).quiet).toBeUndefined();
  });

  test("403: unknown, not none, so the speaker stays unready; the log names the RBAC to apply", () => {
    const watch = watchOf(true);
    expect(watch.failed(403)).toEqual({
      newlyMissing: false,
      log: "may not list ipaddresspools.metallb.io: apply the speaker's RBAC (manifests/speaker/rbac.yaml)",
    });
    expect(watch.missing()).toBe(false);
    expect(watch.listed()).toBe(false);
  });
});
