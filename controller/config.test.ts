import { expect, test } from "vitest";
import { OPTION_NAMES, USAGE } from "./config.ts";

test("--help lists every option the controller accepts, each provider's included", () => {
  const listed = new Set([...USAGE.matchAll(/--([a-z0-9-]+)/g)].map((m) => m[1]));
  const unlisted = OPTION_NAMES.filter((name) => name !== "help" && !listed.has(name));
  expect(unlisted).toEqual([]);
  // And nothing is listed that the command line refuses.
  expect([...listed].filter((name) => !OPTION_NAMES.includes(name!))).toEqual([]);
});
