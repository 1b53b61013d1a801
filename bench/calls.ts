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
