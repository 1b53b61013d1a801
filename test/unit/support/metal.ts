// Helpers for the bare-metal unit tests: valid pools and Services with little ceremony.
import type { IPFamily } from "../../../shared/address.ts";
import type { IPFamilyPolicy, ServiceForAllocation, ServicePort } from "../../../shared/allocationTypes.ts";
import type { Labels } from "../../../shared/labelSelector.ts";
import { parsePool, type Pool } from "../../../shared/pool.ts";

export function pool(name: string, spec: unknown): Pool {
  const parsed = parsePool(name, spec);
  if (!parsed.ok) throw new Error(`test pool ${name} is invalid: ${JSON.stringify(parsed.problems)}`);
  return parsed.pool;
}

export interface ServiceOptions {
  ports?: ServicePort[];
  labels?: Labels;
  namespaceLabels?: Labels;
  ipFamilies?: IPFamily[];
  ipFamilyPolicy?: IPFamilyPolicy;
  backend?: string;
}

export function service(key: string, options: ServiceOptions = {}): ServiceForAllocation {
  return {
    key,
    ports: options.ports ?? [{ protocol: "TCP", port: 80 }],
    labels: options.labels ?? {},
    namespaceLabels: options.namespaceLabels ?? {},
    ipFamilies: options.ipFamilies ?? ["IPv4"],
    ipFamilyPolicy: options.ipFamilyPolicy ?? "SingleStack",
    ...(options.backend !== undefined ? { backend: options.backend } : {}),
  };
}

export const tcp = (port: number): ServicePort => ({ protocol: "TCP", port });
export const udp = (port: number): ServicePort => ({ protocol: "UDP", port });
