// Deterministic names and ownership tags. Everything Portico makes for a Service is named from the Service's
// UID, so a restarted controller finds it again by name, and two clusters can never pick the same name.
import { createHash } from "node:crypto";
import { ownershipTags as sharedOwnershipTags } from "../ownership.ts";
import type { ServiceRef } from "../provider.ts";

/**
 * Ownership tags. ARM refuses tag names containing `<>%&\?/`, so Portico's usual `portico.io/…` keys are
 * spelled with a hyphen here; the values may hold anything (the Service is written `namespace/name`).
 */
export const TAG = {
  cluster: "portico.io-cluster",
  service: "portico.io-service",
  serviceUid: "portico.io-service-uid",
  resource: "portico.io-resource",
  /** On a shared load balancer, one per frontend whose Service is recorded nowhere else: value `ns/name`. */
  frontendPrefix: "portico.io-frontend-",
  /**
   * On Portico's public IP, the UIDs of the other Services that use it, comma-separated (cloud-provider-azure
   * keeps such a list in its k8s-azure-service tag): the public IP goes only when none is left.
   */
  sharedWith: "portico.io-shared-with",
  /**
   * On what Portico took over from another controller (adoption/adoption.ts): whose it was. A load balancer
   * so marked is never deleted; a public IP so marked is the Service's own, found again by its tags rather
   * than its name.
   */
  adoptedFrom: "portico.io-adopted-from",
} as const;

/** ARM allows at most 50 tags on a resource. */
export const MAX_TAGS = 50;
/** ARM names of load balancers, public IPs and their children: at most 80 characters. */
const MAX_NAME = 80;

export function ownershipTags(
  cluster: string,
  service: ServiceRef,
  resource: string,
): Record<string, string> {
  return sharedOwnershipTags(TAG, cluster, service, resource);
}

export type IpFamily = "IPv4" | "IPv6";

/**
 * `a` + the UID without dashes, as cloud-provider-azure names a Service's frontend: unique in any load balancer.
 * The IPv6 side of a Service is `a<uid>v6`: not `a<uid>-…`, so that no child of one family is ever taken for a
 * child of the other's (belongsTo), and the IPv4 side keeps the names it always had.
 */
export function frontendName(uid: string, family: IpFamily = "IPv4"): string {
  return `a${uid.replace(/-/g, "").toLowerCase()}${family === "IPv6" ? "v6" : ""}`;
}

/** The UID a frontend name was made from (either family's), or undefined for frontends Portico did not name. */
export function uidOfFrontend(name: string | undefined): string | undefined {
  const hex = name?.match(/^a([0-9a-f]{32})(?:v6)?$/)?.[1];
  if (!hex) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Load-balancing rules, probes and security rules: `<frontend>-<PROTOCOL>-<port>`. */
export function ruleName(frontend: string, protocol: "TCP" | "UDP", port: number): string {
  return `${frontend}-${protocol}-${port}`;
}

/** Whether a child (rule, probe, pool, security rule) is named for this frontend. */
export function belongsTo(childName: string | undefined, frontend: string): boolean {
  return childName === frontend || (childName?.startsWith(`${frontend}-`) ?? false);
}

/** A name ARM accepts: letters, digits, `.`, `-`, `_`, starting with a letter or digit, at most 80 characters. */
export function armName(text: string, max = MAX_NAME): string {
  const clean = text
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, max)
    .replace(/[.-]+$/, "");
  return clean || "portico";
}

/** The cluster's shared load balancer: `<cluster>` (public) or `<cluster>-internal`, like AKS's `kubernetes`. */
export function sharedLoadBalancerName(base: string, internal: boolean): string {
  const suffix = internal ? "-internal" : "";
  return `${armName(base, MAX_NAME - suffix.length)}${suffix}`;
}

/** A Service's own load balancer when the cluster is configured for one per Service. */
export function serviceLoadBalancerName(cluster: string, uid: string, internal: boolean): string {
  const suffix = `-${frontendName(uid)}${internal ? "-internal" : ""}`;
  return `${armName(cluster, MAX_NAME - suffix.length)}${suffix}`;
}

/** The public IP Portico creates for a Service when none is named: `<cluster>-<frontend>` (per family). */
export function publicIpName(cluster: string, uid: string, family: IpFamily = "IPv4"): string {
  const suffix = `-${frontendName(uid, family)}`;
  return `${armName(cluster, MAX_NAME - suffix.length)}${suffix}`;
}

/** The backend pool every instance-target Service on a shared load balancer uses: the cluster's nodes. */
export const NODE_POOL = "portico-nodes";
/** Its IPv6 counterpart: a pool holds addresses of one family, as a rule's frontend and pool must match. */
export const NODE_POOL_V6 = "portico-nodes-ipv6";
export const nodePoolName = (family: IpFamily): string => (family === "IPv6" ? NODE_POOL_V6 : NODE_POOL);
export const isNodePool = (name: string | undefined): boolean => name === NODE_POOL || name === NODE_POOL_V6;

/** Short, stable stand-in for the cluster name where space is tight (security rule descriptions). */
export function clusterDigest(cluster: string): string {
  return createHash("sha256").update(cluster).digest("hex").slice(0, 10);
}
