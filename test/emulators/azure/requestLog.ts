// Every request the emulator served, labelled by operation ("PUT loadBalancers", "GET operations", "POST token"),
// so that tests and benchmarks can count the ARM calls a reconcile makes.
import type { Route } from "./routes.ts";

export interface LoggedRequest {
  time: string;
  method: string;
  path: string;
  operation: string;
  status: number;
  /** The error code of an error response. */
  code?: string;
  /** The Retry-After the answer carried (seconds), so tests can check that clients waited that long. */
  retryAfterSeconds?: number;
  /** A network fault injected after the request was served: its answer held back, or never sent. */
  fault?: "slow" | "drop";
  /** From arrival until the answer was sent (or the connection dropped), held-back time included. */
  durationMs: number;
}

/** The label a request is counted under. */
export function operationLabel(method: string, route: Route | undefined, path: string): string {
  if (!route) {
    if (/\/oauth2\/v2\.0\/token$/i.test(path)) return `${method} token`;
    if (/openid-configuration$|discovery\/instance$|discovery\/v2\.0\/keys$/i.test(path))
      return `${method} discovery`;
    return `${method} other`;
  }
  switch (route.kind) {
    case "resourceGroups":
    case "resourceGroup":
      return `${method} resourceGroups`;
    case "resourceGroupOperation":
      return `${method} operationResults`;
    case "networkOperation":
      return `${method} ${route.result ? "operationResults" : "operations"}`;
    case "networkList":
      return `${method} ${route.type} (list)`;
    case "network":
      if (!route.child) return `${method} ${route.type}`;
      if (route.child.action) return `${method} ${route.type}/${route.child.segment}/${route.child.action}`;
      return `${method} ${route.type}/${route.child.segment}${route.child.name === undefined ? " (list)" : ""}`;
  }
}

export class RequestLog {
  private entries: LoggedRequest[] = [];

  record(entry: LoggedRequest): void {
    this.entries.push(entry);
  }

  clear(): void {
    this.entries = [];
  }

  all(): LoggedRequest[] {
    return [...this.entries];
  }

  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const e of this.entries) counts[e.operation] = (counts[e.operation] ?? 0) + 1;
    return counts;
  }
}
