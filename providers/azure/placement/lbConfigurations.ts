// cloud-provider-azure's `multipleStandardLoadBalancerConfigurations`, read with its field names so an azure.json
// written for it (or AKS's loadBalancerProfile) means the same here: one Standard load balancer per entry (the
// internal one is `<name>-internal` and shares the entry), with the nodes its primary VM set or agent pool and
// node selector give it, and the Services its selectors and placement flag admit. Checked once, when the
// controller starts: a bad entry is an AzureConfigError naming the field and the fix.
import { isPlainObject, validateLabelSelector, type LabelSelector } from "../../../shared/labelSelector.ts";

export type { LabelSelector };

export interface LoadBalancerConfiguration {
  /** The public load balancer's name; the internal one is `<name>-internal`. */
  name: string;
  /** The VM scale set whose nodes always belong to this load balancer (cloud-provider-azure's field). */
  primaryVMSet?: string;
  /** AKS's name for the same: the agent pool whose nodes always belong to this load balancer. */
  primaryAgentPoolName?: string;
  /** false: only Services already on it, or naming it in azure-load-balancer-configurations, are placed on it. */
  allowServicePlacement?: boolean;
  serviceLabelSelector?: LabelSelector;
  serviceNamespaceSelector?: LabelSelector;
  /** Nodes in no primary pool that match it may be this load balancer's. */
  nodeSelector?: LabelSelector;
}

const FIELD = "multipleStandardLoadBalancerConfigurations";
const SELECTORS = ["serviceLabelSelector", "serviceNamespaceSelector", "nodeSelector"] as const;
const KNOWN = new Set([
  "name",
  "primaryVMSet",
  "primaryAgentPoolName",
  "allowServicePlacement",
  ...SELECTORS,
  // cloud-provider-azure writes its status into the same entries; they are its own bookkeeping, not settings.
  "activeServices",
  "activeNodes",
]);
/** ARM's load balancer names, less the `-internal` suffix the internal one adds. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,69}[A-Za-z0-9_])?$/;

/** Problems of the list as read from JSON, each naming its field; empty when the list is usable. */
export function parseLoadBalancerConfigurations(raw: unknown): {
  configurations: LoadBalancerConfiguration[];
  problems: string[];
} {
  if (!Array.isArray(raw))
    return {
      configurations: [],
      problems: [
        `"${FIELD}" must be a list of load balancer configurations ({"name": ..., "primaryVMSet": ...})`,
      ],
    };
  const problems: string[] = [];
  const configurations = raw.flatMap((entry: unknown, i): LoadBalancerConfiguration[] => {
    const path = `${FIELD}[${i}]`;
    if (!isPlainObject(entry)) {
      problems.push(`"${path}" must be an object with name and primaryVMSet`);
      return [];
    }
    const before = problems.length;
    for (const key of Object.keys(entry))
      if (!KNOWN.has(key))
        problems.push(
          `"${path}.${key}" is not a field Portico reads; known: ${[...KNOWN].slice(0, 7).join(", ")}`,
        );
    const out: LoadBalancerConfiguration = { name: "" };
    if (typeof entry.name !== "string" || !NAME.test(entry.name))
      problems.push(
        `"${path}.name" must be a load balancer name: letters, digits, ".", "-", "_", at most 71 characters`,
      );
    else out.name = entry.name;
    for (const key of ["primaryVMSet", "primaryAgentPoolName"] as const) {
      const value = entry[key];
      if (value === undefined || value === "") continue;
      if (typeof value !== "string") problems.push(`"${path}.${key}" must be a string`);
      else out[key] = value;
    }
    if (entry.allowServicePlacement !== undefined) {
      if (typeof entry.allowServicePlacement !== "boolean")
        problems.push(`"${path}.allowServicePlacement" must be true or false`);
      else out.allowServicePlacement = entry.allowServicePlacement;
    }
    for (const key of SELECTORS) {
      if (entry[key] === undefined || entry[key] === null) continue;
      const checked = validateLabelSelector(entry[key], `"${path}.${key}"`);
      problems.push(...checked.problems);
      if (checked.selector) out[key] = checked.selector;
    }
    return problems.length > before ? [] : [out];
  });
  return { configurations, problems: problems.length ? problems : checkList(configurations) };
}

/**
 * What must hold of the list as a whole, as cloud-provider-azure requires it: distinct names, a primary pool for
 * each, no pool primary twice, and an entry for the cluster's own load balancer (AKS's `kubernetes`) so that the
 * Services already on it stay there. `clusterLoadBalancer` is known once the cluster's name is.
 */
export function checkList(
  configs: readonly LoadBalancerConfiguration[],
  clusterLoadBalancer?: string,
): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const pools = new Map<string, string>();
  configs.forEach((c, i) => {
    const path = `${FIELD}[${i}]`;
    if (names.has(c.name.toLowerCase()))
      problems.push(`"${path}.name" ${c.name} is used twice; give each a name of its own`);
    names.add(c.name.toLowerCase());
    if (!c.primaryVMSet && !c.primaryAgentPoolName)
      problems.push(
        `"${path}" needs "primaryVMSet" (or AKS's "primaryAgentPoolName"): the nodes it always holds`,
      );
    for (const pool of [c.primaryVMSet, c.primaryAgentPoolName]) {
      if (!pool) continue;
      const other = pools.get(pool.toLowerCase());
      if (other && other !== c.name)
        problems.push(
          `"${path}": ${pool} is already the primary pool of ${other}; a pool is primary for one load balancer`,
        );
      pools.set(pool.toLowerCase(), c.name);
    }
  });
  if (clusterLoadBalancer && configs.length && !names.has(clusterLoadBalancer.toLowerCase()))
    problems.push(
      `"${FIELD}" has no entry named ${clusterLoadBalancer}, the cluster's load balancer (loadBalancerName, or the ` +
        "cluster name): add one, so that the Services already on it keep their load balancer",
    );
  return problems;
}

/** The configuration whose public or internal load balancer is named `lbName`, if any. */
export function configurationOf(
  configs: readonly LoadBalancerConfiguration[],
  lbName: string | undefined,
): LoadBalancerConfiguration | undefined {
  const base = lbName?.toLowerCase().replace(/-internal$/, "");
  return configs.find((c) => c.name.toLowerCase() === base);
}
