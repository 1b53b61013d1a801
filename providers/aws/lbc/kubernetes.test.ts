import { describe, expect, test } from "vitest";
import { liveHolder } from "./kubernetes.ts";

describe("whether LBC still runs, from its leader Lease", () => {
  const now = Date.parse("2026-11-25T03:00:00Z");
  const lease = (renewed: string, holder = "lbc-7d9f") => ({
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: renewed as never },
  });

  test("renewed within its duration (and a second one for clock skew): it runs, and who holds it is said", () => {
    expect(liveHolder(lease("2026-11-25T02:59:55Z"), now)).toBe("lbc-7d9f (renewed 5 s ago)");
    expect(liveHolder(lease("2026-11-25T02:59:35Z"), now)).toBe("lbc-7d9f (renewed 25 s ago)");
  });

  test("lapsed, released (no holder) or absent: it does not", () => {
    expect(liveHolder(lease("2026-11-25T02:59:25Z"), now)).toBeUndefined();
    expect(liveHolder(lease("2026-11-25T02:59:59Z", ""), now)).toBeUndefined();
    expect(liveHolder(undefined, now)).toBeUndefined();
  });
});
