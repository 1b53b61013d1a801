import type { V1Lease } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { load } from "js-yaml";
import { SETTINGS_ANNOTATION, type PublishedSettings } from "../publishedSettings.ts";
import { VERSION } from "../version.ts";
import type { RunningController } from "./controllers.ts";
import { Printer } from "./render.ts";
import { version } from "./version.ts";

function running(name: string, settings: Partial<PublishedSettings>, fresh = true): RunningController {
  const full: PublishedSettings = {
    provider: "aws",
    loadBalancerClass: "portico.io/aws-nlb",
    defaultForUnclassed: false,
    clusterName: "prod",
    ...settings,
  };
  const lease: V1Lease = {
    metadata: {
      name,
      namespace: "portico-system",
      annotations: { [SETTINGS_ANNOTATION]: JSON.stringify(full) },
    },
  };
  return { lease, fresh, settings: full };
}

function print(controllers: RunningController[], format: "text" | "json" = "text") {
  let out = "";
  const code = version(new Printer(format, { colour: false, write: (s) => (out += s) }), controllers);
  return { code, out };
}

describe("porticoctl version", () => {
  it("is the chart's appVersion, which the image is installed as", () => {
    const chart = load(
      readFileSync(join(import.meta.dirname, "../../manifests/charts/portico/Chart.yaml"), "utf8"),
    ) as { appVersion: string };
    expect(VERSION).toBe(chart.appVersion);
  });

  it("prints its own and each running controller's, and is content when they match", () => {
    const { code, out } = print([running("portico-controller", { version: VERSION })]);
    expect(out).toBe(
      `porticoctl ${VERSION}\ncontroller portico-system/portico-controller (aws, portico.io/aws-nlb) ${VERSION}\n`,
    );
    expect(code).toBe(0);
  });

  it("says so, and exits 1, when a controller runs another version or does not publish one", () => {
    const { code, out } = print([
      running("portico-controller-a", { version: "0.0.9" }),
      running("portico-controller-b", {}),
      running("portico-controller-stale", { version: "0.0.1" }, false),
    ]);
    expect(out).toContain(
      `controller portico-system/portico-controller-a (aws, portico.io/aws-nlb) 0.0.9: not porticoctl's ${VERSION}`,
    );
    expect(out).toContain(
      "portico-controller-b (aws, portico.io/aws-nlb) of a version that does not publish it",
    );
    expect(out).not.toContain("stale");
    expect(code).toBe(1);
  });

  it("says when it sees no controller, and gives scripts JSON", () => {
    expect(print([]).out).toContain("controllers: none running that this user can see");
    const json = JSON.parse(
      print([running("portico-controller", { version: VERSION })], "json").out,
    ) as unknown;
    expect(json).toEqual({
      porticoctl: VERSION,
      controllers: [
        {
          lease: "portico-system/portico-controller",
          provider: "aws",
          loadBalancerClass: "portico.io/aws-nlb",
          version: VERSION,
        },
      ],
    });
  });
});
