import type { V1Lease } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { service } from "../../test/unit/support/controllerObjects.ts";
import { SETTINGS_ANNOTATION, type PublishedSettings } from "../publishedSettings.ts";
import { controllerFor, type RunningController } from "./controllers.ts";

function running(
  settings: Partial<PublishedSettings> | undefined,
  fresh = true,
  ns = "portico-system",
): RunningController {
  const full = settings && {
    provider: "aws" as const,
    loadBalancerClass: "portico.io/aws-nlb",
    defaultForUnclassed: false,
    clusterName: "prod",
    ...settings,
  };
  const lease: V1Lease = {
    metadata: {
      name: "portico-controller-x",
      namespace: ns,
      annotations: full ? { [SETTINGS_ANNOTATION]: JSON.stringify(full) } : {},
    },
  };
  return { lease, fresh, ...(full ? { settings: full } : {}) };
}

describe("controllerFor", () => {
  const aws = service({ loadBalancerClass: "portico.io/aws-nlb" });

  it("picks the fresh controller of the Service's class", () => {
    const metal = running({ provider: "metal", loadBalancerClass: "portico.io/metal", clusterName: "m" });
    const chosen = controllerFor(aws, [metal, running({})]);
    expect(chosen?.settings?.clusterName).toBe("prod");
  });

  it("ignores stale Leases and Leases without settings", () => {
    expect(controllerFor(aws, [running({}, false), running(undefined)])).toBeUndefined();
  });

  it("an unclassed Service is served by the default controller only", () => {
    const unclassed = service();
    expect(controllerFor(unclassed, [running({})])).toBeUndefined();
    expect(controllerFor(unclassed, [running({ defaultForUnclassed: true })])?.settings?.clusterName).toBe(
      "prod",
    );
  });

  it("a controller confined to the Service's namespace wins over a cluster-wide one, and others' namespaces do not count", () => {
    const wide = running({ clusterName: "wide" });
    const here = running({ clusterName: "here", namespace: "shop" }, true, "shop");
    const there = running({ clusterName: "there", namespace: "elsewhere" }, true, "elsewhere");
    expect(controllerFor(aws, [wide, here, there])?.settings?.clusterName).toBe("here");
    expect(controllerFor(aws, [wide, there])?.settings?.clusterName).toBe("wide");
  });

  it("two equally good controllers that disagree give no answer rather than a guess", () => {
    expect(
      controllerFor(aws, [running({ clusterName: "a" }), running({ clusterName: "b" })]),
    ).toBeUndefined();
  });
});
