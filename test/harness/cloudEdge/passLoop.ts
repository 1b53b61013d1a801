// An edge reconciler's rhythm: one pass about every period, the next starting only when the last has finished, so
// the edge follows what the emulator holds within a period or two; a failing pass is kept for the test's message
// and retried on the next.

export class PassLoop {
  private timer: NodeJS.Timeout | undefined;
  private passes = 0;
  private lastError: unknown;

  private readonly pass: () => Promise<void>;
  private readonly periodMs: number;

  constructor(pass: () => Promise<void>, periodMs = 1000) {
    this.pass = pass;
    this.periodMs = periodMs;
    this.schedule(0);
  }

  /** The last pass's failure, if it failed. */
  get error(): unknown {
    return this.lastError;
  }

  /** Resolves after a full pass that began after this call (the edge has seen what the emulator holds now). */
  async settled(timeoutMs = 30_000): Promise<void> {
    const target = this.passes + 2;
    const deadline = Date.now() + timeoutMs;
    while (this.passes < target) {
      if (Date.now() > deadline)
        throw new Error(`the edge made no pass in ${timeoutMs} ms: ${String(this.lastError)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.pass()
        .then(() => (this.lastError = undefined))
        .catch((err: unknown) => (this.lastError = err))
        .finally(() => {
          this.passes++;
          if (this.timer) this.schedule(this.periodMs);
        });
    }, delayMs);
  }
}
