import { describe, expect, test } from "vitest";
import { judgeSilence, silenceTimes, type Presence, type PresenceProbe } from "./silence.ts";

// The defaults: 100 ms rounds, 500 ms timeout. Probing starts past 300 ms of silence, may take 200 ms, and a
// speaker whose process exists is spared up to 5 s.
const TIMES = silenceTimes(100, 500);
const HEARD = 10_000;
const at = (silence: number) => HEARD + silence;
const settled = (startedAfter: number, result: Presence, settledAfter = startedAfter + 1): PresenceProbe => ({
  startedAt: at(startedAfter),
  result,
  settledAt: at(settledAfter),
});

describe("silenceTimes", () => {
  test("the probe leads the timeout by two rounds, at most half the timeout; the stall cap is ten timeouts", () => {
    expect(silenceTimes(100, 500)).toEqual({ timeoutMs: 500, probeMs: 200, maxStallMs: 5000 });
    expect(silenceTimes(100, 200)).toEqual({ timeoutMs: 200, probeMs: 100, maxStallMs: 2000 });
    expect(silenceTimes(50, 1000)).toEqual({ timeoutMs: 1000, probeMs: 100, maxStallMs: 10_000 });
  });
});

describe("judgeSilence", () => {
  test("a speaker heard within the timeout less the probe's lead is left alone, whatever an old probe said", () => {
    for (const silence of [0, 1, 150, 300])
      for (const probe of [undefined, settled(-400, "no-process"), settled(-400, "unreachable")])
        expect(judgeSilence(at(silence), HEARD, probe, TIMES)).toBe("heard");
  });

  test("past the lead, a silent speaker is probed once, and not judged while the probe is under way", () => {
    expect(judgeSilence(at(301), HEARD, undefined, TIMES)).toBe("probe");
    const pending = { startedAt: at(301) };
    expect(judgeSilence(at(401), HEARD, pending, TIMES)).toBe("wait");
    expect(judgeSilence(at(500), HEARD, pending, TIMES)).toBe("wait");
  });

  test("a probe started before the speaker was last heard says nothing of this silence", () => {
    const old = settled(-50, "process", -40);
    expect(judgeSilence(at(301), HEARD, old, TIMES)).toBe("probe");
    expect(judgeSilence(at(601), HEARD, settled(-1, "no-process"), TIMES)).toBe("probe");
  });

  test("a refused probe is a process gone: dead at once, sooner than the timeout", () => {
    const refused = settled(301, "no-process");
    for (const silence of [302, 400, 500, 501])
      expect(judgeSilence(at(silence), HEARD, refused, TIMES)).toBe("dead");
  });

  test("an unreachable node is declared dead at the timeout, when silence alone did", () => {
    const probe = settled(301, "unreachable");
    expect(judgeSilence(at(400), HEARD, probe, TIMES)).toBe("wait");
    expect(judgeSilence(at(500), HEARD, probe, TIMES)).toBe("wait");
    expect(judgeSilence(at(501), HEARD, probe, TIMES)).toBe("dead");
  });

  test("a probe unanswered for its whole budget is a node that is down or cut off", () => {
    const pending = { startedAt: at(301) };
    // Past the timeout but the probe is younger than its budget (it started late): wait for it.
    expect(judgeSilence(at(501), HEARD, { startedAt: at(350) }, TIMES)).toBe("wait");
    expect(judgeSilence(at(501), HEARD, pending, TIMES)).toBe("dead");
    expect(judgeSilence(at(500), HEARD, { startedAt: at(250) }, TIMES)).toBe("wait");
    expect(judgeSilence(at(501), HEARD, { startedAt: at(301) - 1 }, TIMES)).toBe("dead");
    expect(judgeSilence(at(600), HEARD, pending, TIMES)).toBe("dead");
  });

  test("past the timeout with no probe yet (this speaker's rounds came late), it probes before judging", () => {
    expect(judgeSilence(at(900), HEARD, undefined, TIMES)).toBe("probe");
  });

  test("a speaker whose process exists is spared, and probed again every timeout while it stays silent", () => {
    const found = settled(301, "process", 310);
    for (const silence of [400, 501, 700, 809])
      expect(judgeSilence(at(silence), HEARD, found, TIMES)).toBe("wait");
    expect(judgeSilence(at(810), HEARD, found, TIMES)).toBe("probe");
    // The process died meanwhile: the next probe is refused and, being past the timeout, that is death.
    expect(judgeSilence(at(811), HEARD, settled(810, "no-process", 811), TIMES)).toBe("dead");
    expect(judgeSilence(at(1100), HEARD, settled(810, "process", 812), TIMES)).toBe("wait");
  });

  test("a process found without a settle time is probed again one timeout after the probe started", () => {
    const found = { startedAt: at(301), result: "process" as const };
    expect(judgeSilence(at(800), HEARD, found, TIMES)).toBe("wait");
    expect(judgeSilence(at(801), HEARD, found, TIMES)).toBe("probe");
  });

  test("no speaker is spared longer than the stall cap, even with its process found", () => {
    const found = settled(4900, "process", 4901);
    expect(judgeSilence(at(5000), HEARD, found, TIMES)).toBe("wait");
    expect(judgeSilence(at(5001), HEARD, found, TIMES)).toBe("dead");
    expect(judgeSilence(at(5001), HEARD, undefined, TIMES)).toBe("dead");
    expect(judgeSilence(at(5001), HEARD, { startedAt: at(5000) }, TIMES)).toBe("dead");
  });

  test("with the shortest timeout allowed (two rounds), probing starts after one round of silence", () => {
    const short = silenceTimes(100, 200);
    expect(judgeSilence(at(100), HEARD, undefined, short)).toBe("heard");
    expect(judgeSilence(at(101), HEARD, undefined, short)).toBe("probe");
    expect(judgeSilence(at(201), HEARD, { startedAt: at(101) }, short)).toBe("dead");
    expect(judgeSilence(at(201), HEARD, settled(101, "process"), short)).toBe("wait");
  });
});
