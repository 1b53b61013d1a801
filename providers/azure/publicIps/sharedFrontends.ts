// One address shared by several Services, as cloud-provider-azure allows: Services that name the same public IP
// (azure-pip-name, or its address through azure-load-balancer-ipv4 / spec.loadBalancerIP), or internal Services
// asking for the same static private address, serve different ports of it. ARM lets a public IP be on one
// frontend of one load balancer only, and a private address on one frontend, so they share that frontend: the
// first Service's frontend carries the address, and the others' rules point at it. Pure edits on the load
// balancer as read, like loadBalancer/loadBalancerEdit.ts.
//
// The invariant: a frontend is named after a Service whose rules use it. When that Service leaves the frontend
// (it is deleted, or moves to another address) while other Services' rules still use it, the frontend is handed
// over in the same write: renamed after one of them, their rules pointing at the new name. Who holds a public IP
// Portico made is recorded on it (shared.ts); a user's public IP is only used.
import { ConfigurationError } from "../../errors.ts";
import { childId, nameOf, sameId } from "../arm/ids.ts";
import type { FrontendSpec, LoadBalancer } from "../model.ts";
import { belongsTo, uidOfFrontend } from "../names.ts";

type Frontend = NonNullable<LoadBalancer["frontendIPConfigurations"]>[number];
type Rule = NonNullable<LoadBalancer["loadBalancingRules"]>[number];

/**
 * Another Service's frontend on this load balancer that already carries the address the Service asks for, if
 * any: the same public IP, or (internal) the same static private address in the same subnet.
 */
export function sharedFrontend(lb: LoadBalancer, fe: string, want: FrontendSpec): Frontend | undefined {
  return lb.frontendIPConfigurations?.find((f) => {
    if (f.name === fe) return false;
    if (want.kind === "public") return sameId(f.publicIPAddress?.id, want.publicIpId);
    return (
      want.privateIp !== undefined &&
      sameId(f.subnet?.id, want.subnetId) &&
      f.privateIPAllocationMethod === "Static" &&
      f.privateIPAddress === want.privateIp
    );
  });
}

/** The Service frontend name a rule belongs to (`a<uid>` of `a<uid>-TCP-80`). */
function ownerOf(rule: Rule): string | undefined {
  const prefix = rule.name?.split("-")[0];
  return uidOfFrontend(prefix) ? prefix : undefined;
}

/**
 * The load balancer without frontend `fe` for its Service: dropped when no rule uses it any more, otherwise
 * renamed after the first Service whose rules still use it, with those rules repointed. The Service's own rules
 * must already be gone from `lb`.
 */
export function releaseFrontend(lb: LoadBalancer, fe: string): LoadBalancer {
  const frontends = lb.frontendIPConfigurations ?? [];
  const current = frontends.find((f) => f.name === fe);
  if (!current) return lb;
  const rules = lb.loadBalancingRules ?? [];
  const users = rules.filter((r) => nameOf(r.frontendIPConfiguration?.id) === fe);
  const heir = users
    .map(ownerOf)
    .filter((o): o is string => o !== undefined && !frontends.some((f) => f.name === o))
    .sort()[0];
  if (!heir) return { ...lb, frontendIPConfigurations: frontends.filter((f) => f !== current) };
  const oldId = current.id ?? users[0]!.frontendIPConfiguration!.id!;
  const newId = oldId.replace(/[^/]+$/, heir);
  return {
    ...lb,
    frontendIPConfigurations: frontends.map((f) =>
      f === current ? { ...current, name: heir, id: newId } : f,
    ),
    loadBalancingRules: rules.map((r) =>
      nameOf(r.frontendIPConfiguration?.id) === fe ? { ...r, frontendIPConfiguration: { id: newId } } : r,
    ),
  };
}

/** The id of a frontend of `lb`, as rules refer to it. */
export function frontendIdOf(lbId: string, frontend: Frontend): string {
  return frontend.id ?? childId(lbId, "frontendIPConfigurations", frontend.name ?? "");
}

/**
 * Services sharing a frontend must use different ports: ARM refuses two rules of one frontend with the same
 * protocol and frontend port. Refused here, naming the port, before anything is written.
 */
export function assertPortsFree(lb: LoadBalancer, fe: string, frontendName: string, address: string): void {
  const rules = (lb.loadBalancingRules ?? []).filter(
    (r) => nameOf(r.frontendIPConfiguration?.id) === frontendName,
  );
  const seen = new Map<string, Rule>();
  for (const rule of rules) {
    const key = `${rule.protocol}/${rule.frontendPort}`;
    const other = seen.get(key);
    const mine = belongsTo(rule.name, fe);
    if (other && mine !== belongsTo(other.name, fe))
      throw new ConfigurationError(
        "SharedIPPortInUse",
        "spec.ports",
        `${(rule.protocol ?? "").toUpperCase()} port ${rule.frontendPort} of ${address} is already ` +
          `served by another Service (rule ${mine ? other.name : rule.name})`,
        "give Services that share an address different ports, or use another address",
      );
    seen.set(key, rule);
  }
}
