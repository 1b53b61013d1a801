import { describe, expect, test } from "vitest";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";

const metal = ["--provider=metal", "--cluster-name=lab"];

/** What the metal provider read from its flags about MetalLB's pools. */
const metallb = (config: { settings: unknown }) => (config.settings as { metallb: unknown }).metallb;

describe("the controller's MetalLB flags", () => {
  test("MetalLB's pools are read when installed, in metallb-system, unless told otherwise", () => {
    expect(metallb(parseConfig(metal, {}))).toEqual({ mode: "auto", namespace: "metallb-system" });
    expect(metallb(parseConfig([...metal, "--metallb=off", "--metallb-namespace=lb"], {}))).toEqual({
      mode: "off",
      namespace: "lb",
    });
    expect(
      metallb(parseConfig(metal, { PORTICO_METALLB: "on", PORTICO_METALLB_NAMESPACE: "metallb" })),
    ).toEqual({ mode: "on", namespace: "metallb" });
  });

  test("anything but auto, on or off is a usage error that says so", () => {
    expect(() => parseConfig([...metal, "--metallb=yes"], {})).toThrow(UsageError);
    expect(() => parseConfig([...metal, "--metallb=yes"], {})).toThrow(/--metallb must be auto, on or off/);
  });
});
