// Cloud calls by action from the controller's metrics, between two readings of them.
export function byAction(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    const op = /^portico_cloud_calls_total\{.*operation="([^"]+)"/.exec(key)?.[1];
    if (!op) continue;
    const n = value - (before.get(key) ?? 0);
    if (n > 0) out[op] = (out[op] ?? 0) + n;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export function sum(calls: Record<string, number>, only?: RegExp): number {
  return Object.entries(calls)
    .filter(([op]) => !only || only.test(op))
    .reduce((n, [, c]) => n + c, 0);
}

/** Seconds the controller's calls waited on each rate-limiter bucket between two scrapes, the longest first. */
export function waitedByBucket(
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> {
  return secondsByLabel(before, after, "portico_cloud_rate_limit_bucket_wait_seconds_total", "bucket");
}

/** Seconds the cloud (here, its emulator) took to answer the controller's calls, by action, the longest first. */
export function answerSecondsByAction(
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> {
  return secondsByLabel(before, after, "portico_cloud_call_duration_seconds_sum", "operation");
}

/** A seconds counter's growth between two scrapes, by one of its labels, the largest first (0.05 s and more). */
function secondsByLabel(
  before: Map<string, number>,
  after: Map<string, number>,
  metric: string,
  label: string,
): Record<string, number> {
  const series = new RegExp(`^${metric}\\{.*${label}="([^"]+)"`);
  const out: [string, number][] = [];
  for (const [key, value] of after) {
    const name = series.exec(key)?.[1];
    const seconds = value - (before.get(key) ?? 0);
    if (name && seconds >= 0.05) out.push([name, +seconds.toFixed(1)]);
  }
  return Object.fromEntries(out.sort(([, a], [, b]) => b - a));
}
