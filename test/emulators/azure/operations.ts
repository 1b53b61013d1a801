// Long-running operations. Every PUT and DELETE of a Microsoft.Network resource starts one: the write is accepted
// at once (201/200/202 with provisioningState Updating or Deleting) and completes `operationDurationMs` later, when
// the next request arrives. Clients follow it through the Azure-AsyncOperation URL (operation status) and, for
// deletes, the Location URL (operation result), as NRP's responses tell them to.
import { randomUUID } from "node:crypto";
import type { ArmErrorDetail } from "./errors.ts";

export type OperationStatus = "InProgress" | "Succeeded" | "Failed" | "Canceled";

export interface Operation {
  id: string;
  subscriptionId: string;
  /** The resource (or resource group) the operation changes. */
  resourceId: string;
  provider: "Microsoft.Network" | "Microsoft.Resources";
  location: string;
  apiVersion: string;
  /** `action`: a POST that computes something (a rule's health), its result told by `result` once done. */
  kind: "put" | "delete" | "action";
  result?: () => unknown;
  /** NRP's operation name, e.g. PutLoadBalancerOperation. */
  name: string;
  startedAt: number;
  completesAt: number;
  status: OperationStatus;
  error?: ArmErrorDetail;
  /** When set, the operation ends Failed with this error instead of succeeding (fault injection). */
  failWith?: ArmErrorDetail;
  onSuccess: () => void;
  onFailure: () => void;
}

export type OperationSpec = Omit<Operation, "id" | "startedAt" | "completesAt" | "status"> & {
  durationMs: number;
};

export class Operations {
  private readonly all = new Map<string, Operation>();
  /**
   * Those not yet settled, in the order they started: settle() runs on every request, and going through every
   * operation ever started made each request cost more the longer the emulator ran.
   */
  private readonly unsettled = new Map<string, Operation>();

  start(spec: OperationSpec, now = Date.now()): Operation {
    const { durationMs, ...rest } = spec;
    const op: Operation = {
      ...rest,
      id: randomUUID(),
      startedAt: now,
      completesAt: now + durationMs,
      status: "InProgress",
    };
    this.all.set(op.id, op);
    this.unsettled.set(op.id, op);
    return op;
  }

  get(id: string): Operation | undefined {
    return this.all.get(id.toLowerCase());
  }

  isInProgress(id: string | undefined): boolean {
    return id !== undefined && this.all.get(id)?.status === "InProgress";
  }

  /** Completes, in the order they started, every operation whose time has come. */
  settle(now = Date.now()): void {
    for (const op of this.unsettled.values()) {
      if (op.status !== "InProgress") {
        this.unsettled.delete(op.id); // canceled by a later write
        continue;
      }
      if (op.completesAt > now) continue;
      this.unsettled.delete(op.id);
      if (op.failWith) {
        op.status = "Failed";
        op.error = op.failWith;
        op.onFailure();
      } else {
        op.status = "Succeeded";
        op.onSuccess();
      }
    }
  }

  reset(): void {
    this.all.clear();
    this.unsettled.clear();
  }
}

/** The Azure-AsyncOperation URL: polled for `{"status": ...}`. */
export function asyncOperationUrl(baseUrl: string, op: Operation): string {
  if (op.provider === "Microsoft.Resources") return resultUrl(baseUrl, op);
  return (
    `${baseUrl}/subscriptions/${op.subscriptionId}/providers/Microsoft.Network/locations/${op.location}` +
    `/operations/${op.id}?api-version=${op.apiVersion}`
  );
}

/** The Location URL: 202 while the operation runs, then the operation's result. */
export function resultUrl(baseUrl: string, op: Operation): string {
  if (op.provider === "Microsoft.Resources")
    return `${baseUrl}/subscriptions/${op.subscriptionId}/operationresults/${op.id}?api-version=${op.apiVersion}`;
  return (
    `${baseUrl}/subscriptions/${op.subscriptionId}/providers/Microsoft.Network/locations/${op.location}` +
    `/operationResults/${op.id}?api-version=${op.apiVersion}`
  );
}

export function operationStatusBody(op: Operation): Record<string, unknown> {
  const body: Record<string, unknown> = { status: op.status };
  if (op.error) body.error = { code: op.error.code, message: op.error.message, details: [] };
  return body;
}
