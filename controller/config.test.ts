import { expect, test } from "vitest";
import { usageGaps } from "../test/unit/support/usage.ts";
import { OPTION_NAMES, parseConfig, USAGE } from "./config.ts";

test("--help lists every option the controller accepts, each provider's included, and none it refuses", () => {
  expect(usageGaps(USAGE, OPTION_NAMES)).toEqual({ unlisted: [], refused: [] });
});

test("the comparison sees an option missing from --help, and one listed that is not accepted", () => {
  expect(usageGaps("  --a X   the a\n  --c   the c", ["a", "b", "help"])).toEqual({
    unlisted: ["b"],
    refused: ["c"],
  });
});

test("--security-rule-check-period: a minute by default, in seconds, and positive", () => {
  const base = ["--cluster-name", "c"];
  expect(parseConfig(base, {}).securityRuleCheckPeriodMs).toBe(60_000);
  expect(parseConfig([...base, "--security-rule-check-period", "15"], {}).securityRuleCheckPeriodMs).toBe(
    15_000,
  );
  expect(() => parseConfig([...base, "--security-rule-check-period", "0"], {})).toThrow(
    "--security-rule-check-period must be a positive number of seconds",
  );
});
