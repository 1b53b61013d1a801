// How cloud-provider-azure names and tags what it makes for a Service, so that a cluster moving over to Portico
// keeps its addresses: the Service's public IP is taken over in place (adoption.ts), never replaced. Facts from
// cloud-provider-azure's source (pkg/provider/azure_standard.go, azure_loadbalancer.go, pkg/consts), read:
// - a Service's base name is Kubernetes' DefaultLoadBalancerName: `a` + its UID without dashes, cut to 32
//   characters (so one hex digit shorter than Portico's frontend names, names.ts);
// - its frontend is the base name (`<base>-<subnet>` for an internal Service with a subnet annotation), its rules
//   and probes `<base>-<PROTOCOL>-<port>`, and a dual-stack Service's IPv6 parts add `-IPv6`;
// - its public IP is `<cluster>-<base>` (`-<prefix name>` when made from a public IP prefix, `-IPv6` added as for
//   the other parts), where cluster is the controller manager's
//   --cluster-name (`kubernetes` on AKS), tagged `k8s-azure-service: <ns>/<name>[,<ns>/<name>...]` and
//   `k8s-azure-cluster-name: <cluster>` (older releases: `service` and `kubernetes-cluster-name`);
// - its load balancers are the cluster's, `<cluster>` and `<cluster>-internal`, untagged.
// Pure.
import type { PublicIPAddress } from "../model.ts";
import type { IpFamily } from "../names.ts";

export const CLOUD_PROVIDER_AZURE = "cloud-provider-azure";
/** AKS runs cloud-provider-azure with --cluster-name kubernetes. */
export const DEFAULT_ANCHOR_CLUSTER = "kubernetes";

export const CPA_TAGS = {
  service: "k8s-azure-service",
  legacyService: "service",
  cluster: "k8s-azure-cluster-name",
  legacyCluster: "kubernetes-cluster-name",
  dnsLabelService: "k8s-azure-dns-label-service",
} as const;

/** cloud-provider-azure's tags Portico removes when it takes a public IP over, so that it no longer counts it its own. */
export const CPA_OWNERSHIP_TAGS: readonly string[] = [
  CPA_TAGS.service,
  CPA_TAGS.legacyService,
  CPA_TAGS.cluster,
  CPA_TAGS.legacyCluster,
  CPA_TAGS.dnsLabelService,
  "k8s-azure-legacy-dns-label-service",
];

const NAME_MAX = 80;
const FAMILY_SUFFIX = "-IPv6";

/** `a` + the UID without dashes, at most 32 characters. */
export function cpaBaseName(uid: string): string {
  return `a${uid.replace(/-/g, "")}`.slice(0, 32);
}

/**
 * The names cloud-provider-azure may have given the Service's frontend of this family: an IPv6 frontend has the
 * suffix when the Service is dual-stack and not when it is IPv6 only. `subnet`: an internal frontend's subnet.
 */
export function cpaFrontendNames(uid: string, family: IpFamily, subnet?: string): string[] {
  const base = cpaBaseName(uid);
  const plain = [base, ...(subnet ? [`${base}-${subnet}`.slice(0, NAME_MAX - FAMILY_SUFFIX.length)] : [])];
  return family === "IPv6" ? [...plain.map((n) => `${n}${FAMILY_SUFFIX}`), ...plain] : plain;
}

/**
 * The names of cloud-provider-azure's parts of one side of the Service: its frontends, and whether a rule or probe
 * is one of its (`<frontend>-<PROTOCOL>-<port>`, `-IPv6` at the end on a dual-stack Service's IPv6 side).
 */
export function cpaSide(
  uid: string,
  family: IpFamily,
  dualStack: boolean,
  subnet?: string,
): { frontends: string[]; owns(child: string | undefined): boolean } {
  const base = cpaBaseName(uid);
  const heads = [base, ...(subnet ? [`${base}-${subnet}`.slice(0, NAME_MAX - FAMILY_SUFFIX.length)] : [])];
  const suffix = family === "IPv6" && dualStack ? FAMILY_SUFFIX : "";
  return {
    frontends: heads.map((h) => `${h}${suffix}`),
    owns: (name) =>
      name !== undefined &&
      name.endsWith(suffix) &&
      heads.some(
        (h) =>
          /^-(?:TCP|UDP|SCTP)-\d+$/.test(name.slice(h.length, name.length - suffix.length)) &&
          name.startsWith(h),
      ),
  };
}

/**
 * The names cloud-provider-azure gives the Service's public IP of this family; one made from a public IP prefix
 * (the pip-prefix-id annotation) ends with the prefix's name.
 */
export function cpaPublicIpNames(
  anchorCluster: string,
  uid: string,
  family: IpFamily,
  prefixId?: string,
): string[] {
  const prefix = prefixId?.split("/").filter(Boolean).pop();
  const full = `${anchorCluster}-${cpaBaseName(uid)}${prefix ? `-${prefix}` : ""}`;
  const name = full.slice(0, NAME_MAX - FAMILY_SUFFIX.length);
  return family === "IPv6" ? [`${name}${FAMILY_SUFFIX}`, name] : [name];
}

/** The Services (`namespace/name`) cloud-provider-azure's tags say use the public IP. */
export function cpaServices(pip: PublicIPAddress): string[] {
  const tags = pip.tags ?? {};
  const value = tags[CPA_TAGS.service] ?? tags[CPA_TAGS.legacyService] ?? "";
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The cluster cloud-provider-azure's tags name, if any. */
export function cpaCluster(pip: PublicIPAddress): string | undefined {
  const tags = pip.tags ?? {};
  return tags[CPA_TAGS.cluster] ?? tags[CPA_TAGS.legacyCluster];
}

export type CpaClaim =
  /** No service tag: the user's, whatever made it. */
  | "none"
  /** cloud-provider-azure made it for this Service alone, in the anchor cluster: Portico takes it over. */
  | "this"
  /** cloud-provider-azure made it for this Service and others: used as it is, never deleted. */
  | "shared"
  /** cloud-provider-azure made it for other Services, or in another cluster. */
  | "other";

/** Whose cloud-provider-azure says the public IP is, seen from the Service `namespace/name`. */
export function cpaClaim(pip: PublicIPAddress, service: string, anchorCluster: string): CpaClaim {
  const services = cpaServices(pip);
  if (!services.length) return "none";
  const cluster = cpaCluster(pip);
  const mine = services.some((s) => s.toLowerCase() === service.toLowerCase());
  // A public IP without a cluster tag is not taken over: it could be any cluster's.
  if (!mine || cluster === undefined || cluster.toLowerCase() !== anchorCluster.toLowerCase()) return "other";
  return services.length === 1 ? "this" : "shared";
}
