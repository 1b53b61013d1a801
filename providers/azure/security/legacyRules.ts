// cloud-provider-azure's security rules for an address Portico took over. Left in place, they would go on
// allowing what they allowed, whatever the Service's source ranges say now, so once Portico's own rules for the
// Service are in the group, the address leaves cloud-provider-azure's: out of the destinations of its shared
// rules (`k8s-azure-lb_allow_IPv4_<hash>`, `k8s-azure-lb_deny-all_IPv4`; one with no destination left goes), and
// its older per-Service rules (`<base>-TCP-80-Internet`) go. Only rules in cloud-provider-azure's priority range
// are read; nothing else in the group is touched. Pure, like rulesEdit.ts.
import { cpaBaseName } from "../adoption/cloudProviderAzure.ts";
import type { NetworkSecurityGroup } from "../model.ts";
import { PRIORITY_RANGE } from "./rulesEdit.ts";

type SecurityRule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];

/** The prefix of cloud-provider-azure's shared rules. */
const SHARED_PREFIX = "k8s-azure-lb_";

/**
 * The group without cloud-provider-azure's rules for the Service `uid` at `address`; `nsg` itself when it has none.
 */
export function withoutLegacySecurityRules(
  nsg: NetworkSecurityGroup,
  uid: string,
  address: string,
): NetworkSecurityGroup {
  const base = `${cpaBaseName(uid)}-`;
  const own = (r: SecurityRule) =>
    r.name?.startsWith(base) === true && /-(?:TCP|UDP|SCTP|\*)-[\d*]+-/i.test(r.name.slice(base.length - 1));
  let changed = false;
  const rules = (nsg.securityRules ?? []).flatMap((r): SecurityRule[] => {
    if (!inRange(r)) return [r];
    if (own(r)) {
      changed = true;
      return [];
    }
    if (!r.name?.startsWith(SHARED_PREFIX)) return [r];
    const destinations = [
      ...(r.destinationAddressPrefix ? [r.destinationAddressPrefix] : []),
      ...(r.destinationAddressPrefixes ?? []),
    ];
    if (!destinations.includes(address)) return [r];
    changed = true;
    const rest = destinations.filter((d) => d !== address);
    if (!rest.length) return [];
    const { destinationAddressPrefix: _one, destinationAddressPrefixes: _many, ...other } = r;
    return [
      {
        ...other,
        ...(rest.length === 1 ? { destinationAddressPrefix: rest[0] } : { destinationAddressPrefixes: rest }),
      },
    ];
  });
  return changed ? { ...nsg, securityRules: rules } : nsg;
}

function inRange(r: SecurityRule): boolean {
  const p = r.priority ?? 0;
  return r.direction !== "Outbound" && p >= PRIORITY_RANGE.min && p <= PRIORITY_RANGE.max;
}
