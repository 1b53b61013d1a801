// Slow or dead? What a speaker does about a successor it has not heard from. Pure: the clock and the probe's
// outcome come in, a verdict goes out; memberlist.ts carries it out.
//
// Silence alone cannot tell a dead speaker from one that got no CPU: on a saturated machine a process at normal
// priority can wait half a second for a core, as long as the membership timeout. The node's kernel can tell
// them apart, because it keeps running when the speaker does not: every speaker listens on TCP at the
// membership port, and a connection attempt to a silent one is answered by its node's kernel, without the
// speaker's help — completed if the speaker's process exists (however starved, its listening socket is there),
// refused if the process is gone (a crash closes every socket), and not at all if the node is down or cut off.
// So the probe starts a little before the timeout. A refused one is proof of death and declares it at once, sooner
// than silence alone did; an unanswered one declares it at the timeout, exactly when silence alone did; only a
// completed one waits, probing again every timeout, and for at most `maxStallMs` (a speaker whose event loop
// hangs is still failed over). The other side of the
// same question, a starved observer, is `starved` below.

/** What a connection attempt to a silent speaker's membership port found. */
export type Presence =
  /** Completed by its node's kernel: the speaker's process exists (it may be starved of CPU). */
  | "process"
  /** Refused by its node's kernel: nothing listens, the speaker's process is gone. */
  | "no-process"
  /** No answer, or the network said the host cannot be reached: the node is down or cut off. */
  | "unreachable";

export interface PresenceProbe {
  readonly startedAt: number;
  /** Unset while the attempt is under way. */
  readonly result?: Presence;
  readonly settledAt?: number;
}

export interface SilenceTimes {
  /** Silence after which a speaker whose process is not known to exist is dead. */
  readonly timeoutMs: number;
  /** How long before the timeout the probe starts, and how long it may take before it counts as unanswered. */
  readonly probeMs: number;
  /** The longest silence tolerated from a speaker whose process exists. */
  readonly maxStallMs: number;
}

export type Verdict =
  /** Heard recently enough: nothing to do. */
  | "heard"
  /** Start a probe (none covers this silence yet, or the last found the process and is due again). */
  | "probe"
  /** Not yet decided: a probe is under way, or found the process and is not due again. */
  | "wait"
  | "dead";

/**
 * The verdict on a successor last heard from at `heardAt`, given the latest probe of it (a probe started before
 * `heardAt` says nothing of this silence and is ignored).
 */
export function judgeSilence(
  now: number,
  heardAt: number,
  probe: PresenceProbe | undefined,
  times: SilenceTimes,
): Verdict {
  const silence = now - heardAt;
  if (silence <= times.timeoutMs - times.probeMs) return "heard";
  if (silence > times.maxStallMs) return "dead";
  const current = probe && probe.startedAt >= heardAt ? probe : undefined;
  const timedOut = silence > times.timeoutMs;
  if (!current) return "probe";
  if (current.result === undefined)
    return timedOut && now - current.startedAt >= times.probeMs ? "dead" : "wait";
  // Refused: the process is gone, nothing to wait for. Unanswered: the node may only be slow to answer, so
  // it has the whole timeout, as before.
  if (current.result === "no-process") return "dead";
  if (current.result === "unreachable") return timedOut ? "dead" : "wait";
  // The process exists: starved, most likely. Look again every timeout, in case it died meanwhile.
  return now - (current.settledAt ?? current.startedAt) >= times.timeoutMs ? "probe" : "wait";
}

/**
 * The probe's lead and budget: two probe rounds, so it starts one round before the round that would have judged
 * on silence alone and has a whole round to be answered, but at most half the timeout, so that a speaker is probed
 * only after several missed acks. The longest stall tolerated: ten timeouts.
 */
export function silenceTimes(intervalMs: number, timeoutMs: number): SilenceTimes {
  return { timeoutMs, probeMs: Math.min(2 * intervalMs, timeoutMs / 2), maxStallMs: 10 * timeoutMs };
}

/**
 * Whether this process was itself starved since the last probe round: the round came later than twice its
 * interval. A starved speaker's socket may hold acks it has not read yet (Node runs due timers before it reads
 * sockets), so the silence it measures says nothing of the others; it judges nobody on that round, reads what
 * arrived, and judges on the next. Under a saturated CPU this keeps a slow speaker from declaring live ones dead.
 */
export function starved(lastRoundAt: number | undefined, now: number, intervalMs: number): boolean {
  return lastRoundAt !== undefined && now - lastRoundAt > 2 * intervalMs;
}
