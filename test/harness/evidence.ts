// Evidence that a program looked, for tests that assert nothing happened: a check made after a sleep passes
// vacuously on a machine too slow to have acted in time, one made after the program's own counters have moved
// cannot.
import { waitFor, type WaitOptions } from "./wait.ts";

/** A prom-client counter or gauge, or anything that reads like one (e.g. the speaker's scraped metrics). */
export interface CountedMetric {
  get(): Promise<{
    values: readonly { value: number; labels: Record<string, string | number | undefined> }[];
  }>;
}

/** The metric's value summed over the series whose labels include `labels`. */
export async function total(metric: CountedMetric, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

/**
 * Marks the metric's value now; the returned function waits until it has counted `more` beyond the mark:
 * e.g. `const looked = await mark(controller.metrics.orphanCollections); …; await looked("three more orphan
 * collections", 3)`.
 */
export async function mark(
  metric: CountedMetric,
  labels: Record<string, string> = {},
): Promise<(what: string, more?: number, opts?: WaitOptions) => Promise<number>> {
  const since = await total(metric, labels);
  return (what, more = 1, opts) =>
    waitFor(
      what,
      async () => {
        const now = await total(metric, labels);
        return now >= since + more ? now : undefined;
      },
      opts,
    );
}
