// ELBv2's registration delay: "it can take a few minutes for the registration process to complete and health
// checks to start". The edge starts checking a target only `delayMs` after it first saw it registered; until then,
// and until the target passes its healthy threshold, it is `initial` and gets no traffic. A target deregistered and
// registered again starts over. Pure, given the clock.

/** How long the edge waits by default: AWS's minutes scaled down, so that tests wait seconds. */
export const REGISTRATION_DELAY_MS = 3_000;

export class Registrations {
  private readonly firstSeen = new Map<string, number>();
  private readonly delayMs: number;

  constructor(delayMs: number) {
    this.delayMs = delayMs;
  }

  /**
   * Of the targets registered now (their keys), those whose registration is complete, so that checks start; the
   * targets no longer registered are forgotten.
   */
  complete(registered: readonly string[], now: number): Set<string> {
    const current = new Set(registered);
    for (const key of [...this.firstSeen.keys()]) if (!current.has(key)) this.firstSeen.delete(key);
    const out = new Set<string>();
    for (const key of registered) {
      const seen = this.firstSeen.get(key) ?? now;
      this.firstSeen.set(key, seen);
      if (now - seen >= this.delayMs) out.add(key);
    }
    return out;
  }
}
