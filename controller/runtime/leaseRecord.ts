// The Lease record as leader election writes it, and the request options every Lease call uses. Pure
// helpers of controller/runtime/leader.ts, kept apart so the election loop reads on its own.
import {
  ApiException,
  Observable,
  V1MicroTime,
  type ConfigurationOptions,
  type V1Lease,
  type V1LeaseSpec,
} from "@kubernetes/client-node";

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function acquiredSpec(
  identity: string,
  leaseDurationMs: number,
  current: V1Lease | undefined,
): V1LeaseSpec {
  const now = new V1MicroTime();
  const transitions = current?.spec?.leaseTransitions ?? -1;
  return {
    ...current?.spec,
    holderIdentity: identity,
    leaseDurationSeconds: seconds(leaseDurationMs),
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitions + 1,
  };
}

export function renewedSpec(identity: string, leaseDurationMs: number, current: V1Lease): V1LeaseSpec {
  return {
    ...current.spec,
    holderIdentity: identity,
    leaseDurationSeconds: seconds(leaseDurationMs),
    renewTime: new V1MicroTime(),
  };
}

/** As client-go releases: no holder, the shortest valid duration, transitions kept. */
export function releasedSpec(current: V1Lease): V1LeaseSpec {
  const now = new V1MicroTime();
  return { ...current.spec, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
}

/** The Lease with a new spec; `annotations` (the leader's published settings) are added to its own. */
export function withSpec(lease: V1Lease, spec: V1LeaseSpec, annotations?: Record<string, string>): V1Lease {
  const metadata = annotations
    ? { ...lease.metadata, annotations: { ...lease.metadata?.annotations, ...annotations } }
    : lease.metadata;
  return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata, spec };
}

/**
 * Request options that abort the call with `signal` or after `deadlineMs`: a request must never outlive the
 * renew deadline, or a hung connection would stall the election loop. The object-parameter API runs
 * per-request middleware as client-node's own Observable (a promise wrapper).
 */
export function boundedRequest(deadlineMs: number, signal: AbortSignal): ConfigurationOptions {
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(deadlineMs)]);
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(bounded);
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: "append",
  };
}

/** The apiserver's own message for API errors (client-node wraps it in a multi-line dump), else the error text. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    try {
      const status = (typeof body === "string" ? JSON.parse(body) : body) as { message?: string };
      if (status?.message) return `${err.code}: ${status.message}`;
    } catch {
      // not a Status object: fall through to the raw text
    }
    return `${err.code}: ${String(body)}`;
  }
  return err instanceof Error ? err.message : String(err);
}
