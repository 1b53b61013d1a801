import { createHash } from "node:crypto";
import { ownershipTags as sharedOwnershipTags } from "../ownership.ts";
import type { ServiceRef } from "../provider.ts";

/** Ownership tags on every resource Portico creates; observed state is found again through them. */
export const TAG = {
  cluster: "portico.io/cluster",
  service: "portico.io/service",
  serviceUid: "portico.io/service-uid",
  resource: "portico.io/resource",
} as const;

export function ownershipTags(
  cluster: string,
  service: ServiceRef,
  resource: string,
): Record<string, string> {
  return sharedOwnershipTags(TAG, cluster, service, resource);
}

function hash(...parts: (string | number)[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex");
}

/** `k8s-<ns>-<name>-<hash>`: at most 32 characters, as ELBv2 requires, readable in the console. */
function shortName(service: ServiceRef, digest: string): string {
  // Truncation can leave a hyphen at an end, and ELBv2 refuses names with "--" in them (a namespace or Service
  // name may well hold two: "team--web").
  const clean = (s: string) =>
    s
      .replace(/[^a-zA-Z0-9-]/g, "")
      .slice(0, 8)
      .replace(/-{2,}/g, "-")
      .replace(/^-+|-+$/g, "") || "x";
  return `k8s-${clean(service.namespace)}-${clean(service.name)}-${digest.slice(0, 10)}`;
}

/**
 * The scheme is part of the name: an NLB's scheme cannot change, so a new scheme means a new load balancer. So is
 * `variant`, what else cannot change in place (static addresses, having no security group); empty for the common
 * case, so that names stay as they were.
 */
export function loadBalancerName(cluster: string, service: ServiceRef, scheme: string, variant = ""): string {
  return shortName(service, hash("lb", cluster, service.uid, scheme, ...(variant ? [variant] : [])));
}

/**
 * Everything a target group cannot change in place is part of its name (the load balancer it belongs to,
 * protocol, port, target type, VPC), so a change to any of them yields a new group, made before the old one goes.
 */
export function targetGroupName(
  service: ServiceRef,
  parts: {
    loadBalancer: string;
    protocol: string;
    port: number;
    targetType: string;
    vpcId: string;
    listenerPort: number;
    /** Only when not IPv4, so that existing groups keep their names. */
    ipAddressType?: string;
  },
): string {
  return shortName(
    service,
    hash(
      "tg",
      service.uid,
      parts.loadBalancer,
      parts.protocol,
      parts.port,
      parts.targetType,
      parts.vpcId,
      parts.listenerPort,
      ...(parts.ipAddressType ? [parts.ipAddressType] : []),
    ),
  );
}

export function securityGroupName(cluster: string, service: ServiceRef): string {
  return shortName(service, hash("sg", cluster, service.uid));
}

/** The EC2 instance ID in a Node's `aws:///zone/i-…` providerID. */
export function instanceIdFromProviderID(providerID: string | undefined): string | undefined {
  return providerID?.match(/^aws:\/\/\/[^/]*\/(i-[0-9a-f]+)$/)?.[1];
}
