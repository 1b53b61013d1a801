// Which Services own something in ARM, for orphan collection. Sub-resources of a load balancer carry no tags,
// so each Service is recorded where ARM allows it: its own public IP's tags (namespace/name/UID); for Services
// without one (internal, or on a user's public IP), a tag on the shared load balancer keyed by the frontend
// name (which is the UID); a per-Service load balancer's own tags; and the description of its security rules.
// Pure: reads an observation.
import type { ServiceRef } from "../../provider.ts";
import type { Observed } from "../model.ts";
import { clusterDigest, TAG, uidOfFrontend } from "../names.ts";

export function ownedServiceRefs(observed: Observed, cluster: string): ServiceRef[] {
  const found = new Map<string, ServiceRef>();
  const add = (uid: string | undefined, qualified: string | undefined) => {
    const [namespace, name, ...rest] = (qualified ?? "").split("/");
    if (uid && namespace && name && !rest.length) found.set(uid, { namespace, name, uid });
  };
  for (const pip of observed.publicIps)
    if (pip.tags?.[TAG.cluster] === cluster) add(pip.tags[TAG.serviceUid], pip.tags[TAG.service]);
  for (const lb of observed.loadBalancers) {
    const tags = lb.tags ?? {};
    if (tags[TAG.cluster] !== cluster) continue;
    add(tags[TAG.serviceUid], tags[TAG.service]);
    for (const [key, value] of Object.entries(tags))
      if (key.startsWith(TAG.frontendPrefix)) add(uidOfFrontend(key.slice(TAG.frontendPrefix.length)), value);
  }
  const mark = `portico:${clusterDigest(cluster)}:`;
  for (const rule of observed.securityGroup?.securityRules ?? []) {
    if (!rule.description?.startsWith(mark)) continue;
    add(uidOfFrontend(rule.name?.split("-")[0]), rule.description.slice(mark.length));
  }
  return [...found.values()];
}
