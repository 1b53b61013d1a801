import { expect, test } from "vitest";
import { usageGaps } from "../test/unit/support/usage.ts";
import { OPTION_NAMES, USAGE } from "./config.ts";

test("--help lists every option the controller accepts, each provider's included, and none it refuses", () => {
  expect(usageGaps(USAGE, OPTION_NAMES)).toEqual({ unlisted: [], refused: [] });
});

test("the comparison sees an option missing from --help, and one listed that is not accepted", () => {
  expect(usageGaps("  --a X   the a\n  --c   the c", ["a", "b", "help"])).toEqual({
    unlisted: ["b"],
    refused: ["c"],
  });
});
