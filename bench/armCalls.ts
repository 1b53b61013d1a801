// What ARM was asked, from the Azure emulator's request counts: the benchmarks' call accounting.
import type { TestAzure } from "../test/harness/azure.ts";

export interface ArmCalls {
  calls: number;
  writes: number;
  byOperation: Record<string, number>;
}

/** ARM requests among the emulator's counts (token and discovery requests are Entra ID's, not ARM's). */
export function armCalls(counts: Record<string, number>): ArmCalls {
  let calls = 0;
  let writes = 0;
  const byOperation: Record<string, number> = {};
  for (const [op, n] of Object.entries(counts)) {
    if (/ (token|discovery)$/.test(op)) continue;
    calls += n;
    if (/^(PUT|PATCH|DELETE) /.test(op)) writes += n;
    byOperation[op] = n;
  }
  return { calls, writes, byOperation };
}

export function perService(byOperation: Record<string, number>, services: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(byOperation)
      .sort(([, a], [, b]) => b - a)
      .map(([op, n]) => [op, +(n / services).toFixed(2)]),
  );
}

/** ARM's refusals by code: lost etag races (412), busy resources (409), throttling. */
export async function errorsByCode(azure: TestAzure): Promise<Record<string, number> | "none"> {
  const out: Record<string, number> = {};
  for (const r of await azure.requests())
    if (r.status >= 400) out[r.code ?? String(r.status)] = (out[r.code ?? String(r.status)] ?? 0) + 1;
  return Object.keys(out).length ? out : "none";
}
