import { inspect } from "node:util";

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `probe` until it returns something other than undefined/false and returns that. On timeout it fails
 * with what was awaited and the last thing seen (or the last error), so a failing test explains itself.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 20_000, intervalMs = 100 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err instanceof Error ? `error: ${err.message}` : err;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}; last seen: ${describe(last)}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function describe(value: unknown): string {
  return typeof value === "string"
    ? value
    : inspect(value, { depth: 4, breakLength: Infinity }).slice(0, 2000);
}
