// The plan: which writes turn what is observed into what one Service should have, in an order ARM accepts and
// that keeps the Service reachable (make before break). Pure: the same inputs give the same plan, so it is
// unit-tested exhaustively and shown as a dry run. Load balancer and security group operations carry no body:
// apply re-runs the same pure edits on a fresh read, so they never overwrite another Service's concurrent write.
import type { Notice } from "../../provider.ts";
import { nameOf, sameId } from "../arm/ids.ts";
import { canonical, holdsService, withoutService, withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { DesiredService, LoadBalancer, Observed, PublicIPAddress } from "../model.ts";
import { belongsTo, isNodePool, TAG, type IpFamily } from "../names.ts";
import { dnsLabelOf, familyOf } from "../publicIps/choice.ts";
import type { IpTag } from "../annotations/publicIp.ts";
import {
  holds,
  leaveOutcome,
  observedHolders,
  sharersOf,
  type Holders,
  type LeaveOutcome,
  type SharingOperation,
} from "../publicIps/shared.ts";
import { withoutServiceRules, withServiceRules } from "../security/rulesEdit.ts";
import { legacyElsewhere, legacyFrontend, pinnedTo } from "../adoption/adoption.ts";
import { CLOUD_PROVIDER_AZURE } from "../adoption/cloudProviderAzure.ts";
import { withoutLegacySecurityRules } from "../security/legacyRules.ts";

export type Operation =
  | {
      kind: "createPublicIp";
      name: string;
      resourceGroup: string;
      tags: Record<string, string>;
      dnsLabel?: string;
      ipTags: IpTag[];
      prefixId?: string;
      /** Absent: IPv4. */
      version?: IpFamily;
    }
  | { kind: "setPublicIpDnsLabel"; name: string; resourceGroup: string; dnsLabel?: string }
  | { kind: "tagPublicIp"; name: string; resourceGroup: string; tags: Record<string, string> }
  /** Another controller's public IP for the Service becomes Portico's: its tags say so, its address stays. */
  | {
      kind: "adoptPublicIp";
      name: string;
      resourceGroup: string;
      id: string;
      from: string;
      address?: string;
      tags: Record<string, string>;
    }
  /** cloud-provider-azure's frontend of the Service leaves another load balancer, so its public IP can move. */
  | { kind: "releaseLegacyFrontend"; loadBalancer: string; frontend: string; address: string }
  /** The address leaves cloud-provider-azure's security rules, once Portico's own rules admit its traffic. */
  | { kind: "removeLegacySecurityRules"; securityGroup: string; address: string }
  | {
      kind: "updateLoadBalancer";
      loadBalancer: string;
      create: boolean;
      changes: string[];
      /**
       * A private address the new frontend asks for: the one cloud-provider-azure's frontend had
       * (adoption/adoption.ts).
       */
      pinAddress?: string;
    }
  | { kind: "removeFromLoadBalancer"; loadBalancer: string; deletesIt: boolean; reason: string }
  | { kind: "updateSecurityRules"; securityGroup: string; count: number }
  | { kind: "removeSecurityRules"; securityGroup: string }
  | SharingOperation;

export interface Plan {
  operations: Operation[];
  notices: Notice[];
}

/** The Service's frontend address as observed (public IP or private frontend address), if it has one yet. */
export function observedAddress(d: DesiredService, observed: Observed): string | undefined {
  if (d.frontend.kind === "public") {
    const id = d.frontend.publicIpId;
    return observed.publicIps.find((p) => sameId(p.id, id))?.ipAddress;
  }
  if (d.frontend.privateIp) return d.frontend.privateIp;
  const lb = observed.loadBalancers.find((l) => l.name === d.loadBalancer.name);
  return lb?.frontendIPConfigurations?.find((f) => f.name === d.frontendName)?.privateIPAddress;
}

/** `holders`: who the Services on shared public IPs are (publicIps/shared.ts), for what leaving one does. */
export function plan(
  d: DesiredService,
  observed: Observed,
  holders: Holders = observedHolders(observed),
): Plan {
  const ops: Operation[] = [];
  const notices: Notice[] = [];
  const fe = d.frontendName;
  const pip = d.publicIp;
  if (pip?.kind === "managed") {
    const existing = observed.publicIps.find((p) => sameId(p.id, pip.id));
    const where = { name: pip.name, resourceGroup: pip.resourceGroup };
    if (!existing)
      ops.push({
        kind: "createPublicIp",
        ...where,
        tags: pip.tags,
        ...(pip.dnsLabel ? { dnsLabel: pip.dnsLabel } : {}),
        ipTags: pip.ipTags,
        ...(pip.prefixId ? { prefixId: pip.prefixId } : {}),
        ...(pip.version ? { version: pip.version } : {}),
      });
    else {
      if (pip.adopt)
        ops.push({
          kind: "adoptPublicIp",
          ...where,
          id: pip.id,
          from: pip.adopt.from,
          ...(pip.adopt.address ? { address: pip.adopt.address } : {}),
          tags: { ...pip.tags, [TAG.adoptedFrom]: pip.adopt.from },
        });
      else if (Object.entries(pip.tags).some(([k, v]) => existing.tags?.[k] !== v))
        ops.push({ kind: "tagPublicIp", ...where, tags: pip.tags });
      // Changed or removed with the annotation: Portico's public IP carries exactly the label asked for.
      if (dnsLabelOf(existing) !== pip.dnsLabel)
        ops.push({
          kind: "setPublicIpDnsLabel",
          ...where,
          ...(pip.dnsLabel ? { dnsLabel: pip.dnsLabel } : {}),
        });
    }
  }

  if (pip?.kind === "shared") {
    const existing = observed.publicIps.find((p) => sameId(p.id, pip.id));
    // Recorded before the load balancer uses it, so that its owner leaving meanwhile hands it over, not deletes it.
    if (existing && !sharersOf(existing).includes(d.service.uid))
      ops.push({
        kind: "sharePublicIp",
        name: pip.name,
        resourceGroup: pip.resourceGroup,
        uid: d.service.uid,
      });
  }

  const target = observed.loadBalancers.find(
    (lb) => lb.name?.toLowerCase() === d.loadBalancer.name.toLowerCase(),
  );
  const others = observed.loadBalancers.filter(
    (lb) => lb !== target && ownedLoadBalancer(lb, d.cluster) && holdsService(lb, fe),
  );
  // A public IP serves one load balancer at a time: if the Service's moves between load balancers, the old
  // frontend must go first, and the Service is briefly unreachable.
  const breakFirst = others.filter((lb) =>
    lb.frontendIPConfigurations?.some((f) => f.name === fe && sameId(f.publicIPAddress?.id, pip?.id)),
  );
  for (const lb of breakFirst) {
    ops.push(removal(lb, fe, `its public IP moves to ${d.loadBalancer.name}`));
    notices.push({
      type: "Warning",
      reason: "MovingLoadBalancer",
      message: `moving to load balancer ${d.loadBalancer.name}: the public IP must leave ${lb.name} first, so the Service is unreachable until the move completes`,
    });
  }
  // Where Portico uses another load balancer than cloud-provider-azure did, the address moves with the Service.
  let pin: string | undefined;
  for (const legacy of legacyElsewhere(observed.loadBalancers, d)) {
    const ip = observedAddress(d, observed);
    const what = legacy.privateAddress
      ? `private address ${legacy.privateAddress}`
      : `public IP ${nameOf(pip?.id)}${ip ? ` (${ip})` : ""}`;
    pin ??= legacy.privateAddress;
    ops.push({
      kind: "releaseLegacyFrontend",
      loadBalancer: legacy.loadBalancer,
      frontend: legacy.frontend,
      address: what,
    });
    notices.push({
      type: "Warning",
      reason: "TrafficMoves",
      message:
        `${what} moves from ${CLOUD_PROVIDER_AZURE}'s frontend ${legacy.frontend} on load balancer ` +
        `${legacy.loadBalancer} to Portico's on ${d.loadBalancer.name}: the address is kept, and traffic stops until the new frontend is in place; ` +
        `set loadBalancerName to ${legacy.loadBalancer} in the Azure config to take the load balancer over in place instead`,
    });
  }
  const after = withService(target, pin ? pinnedTo(d, pin) : d);
  const legacy = legacyFrontend(target, d);
  if (!target || after !== target)
    ops.push({
      kind: "updateLoadBalancer",
      loadBalancer: d.loadBalancer.name,
      create: !target,
      ...(pin ? { pinAddress: pin } : {}),
      changes: [
        ...(legacy && after !== target
          ? [
              `adopt ${CLOUD_PROVIDER_AZURE}'s frontend ${legacy.name} as ${fe} (address kept), its rules and probes replaced by Portico's`,
            ]
          : []),
        ...describeChanges(target, after, fe),
      ],
    });
  for (const lb of others)
    if (!breakFirst.includes(lb)) ops.push(removal(lb, fe, `moved to ${d.loadBalancer.name}`));

  const nsg = observed.securityGroup;
  if (d.securityRules && nsg) {
    const edited = withServiceRules(nsg, {
      frontend: fe,
      description: d.securityRuleDescription,
      rules: d.securityRules,
      frontendAddress: observedAddress(d, observed),
    });
    const pending =
      d.securityRules.some((r) => r.destination === "frontend") && !observedAddress(d, observed);
    if (edited !== nsg || pending)
      ops.push({ kind: "updateSecurityRules", securityGroup: nsg.name ?? "", count: d.securityRules.length });
    const address = observedAddress(d, observed);
    if (address && withoutLegacySecurityRules(nsg, d.service.uid, address) !== nsg)
      ops.push({ kind: "removeLegacySecurityRules", securityGroup: nsg.name ?? "", address });
  } else if (nsg && withoutServiceRules(nsg, fe) !== nsg)
    ops.push({ kind: "removeSecurityRules", securityGroup: nsg.name ?? "" });

  // Only this side's family: the other family's public IP is the other side's to keep or let go.
  for (const old of heldPublicIps(observed.publicIps, d.cluster, d.service.uid))
    if (!sameId(old.id, pip?.id) && familyOf(old) === d.family) ops.push(leave(old, d.service.uid, holders));
  return { operations: ops, notices };
}

/**
 * Everything that removes a Service, or one family's side of it: rules and frontends first, then the public IPs
 * they used. Each operation carries the frontend it removes.
 */
export function planDeletion(
  service: { uid: string },
  frontend: string,
  cluster: string,
  observed: Observed,
  family?: IpFamily,
  holders: Holders = observedHolders(observed),
): Operation[] {
  const ops: Operation[] = [];
  const nsg = observed.securityGroup;
  if (nsg && withoutServiceRules(nsg, frontend) !== nsg)
    ops.push({ kind: "removeSecurityRules", securityGroup: nsg.name ?? "" });
  for (const lb of observed.loadBalancers)
    if (ownedLoadBalancer(lb, cluster) && holdsService(lb, frontend))
      ops.push(
        removal(
          lb,
          frontend,
          family ? `the Service no longer has ${family}` : "the Service no longer needs it",
        ),
      );
  for (const pip of heldPublicIps(observed.publicIps, cluster, service.uid))
    if (!family || familyOf(pip) === family) ops.push(leave(pip, service.uid, holders));
  return ops;
}

export function ownedLoadBalancer(lb: LoadBalancer, cluster: string): boolean {
  return lb.tags?.[TAG.cluster] === cluster;
}

/** This cluster's public IPs that the Service owns or shares. */
function heldPublicIps(pips: PublicIPAddress[], cluster: string, uid: string): PublicIPAddress[] {
  return pips.filter((p) => p.tags?.[TAG.cluster] === cluster && holds(p.tags, uid));
}

/**
 * A Service letting go of a public IP it holds: off its list, handed to a sharer, or deleted with nobody left.
 * What the observation shows; the write decides again from the public IP as it is then (publicIps/shared.ts).
 */
function leave(pip: PublicIPAddress, uid: string, holders: Holders): Operation {
  const resourceGroup = pip.id?.match(/\/resourceGroups\/([^/]+)/i)?.[1] ?? "";
  return {
    kind: "leavePublicIp",
    name: pip.name ?? "",
    resourceGroup,
    uid,
    expected: leaveOutcome(pip.tags ?? {}, uid, holders) ?? { kind: "offList" },
  };
}

function removal(lb: LoadBalancer, fe: string, reason: string): Operation {
  return {
    kind: "removeFromLoadBalancer",
    loadBalancer: lb.name ?? "",
    deletesIt: withoutService(lb, fe) === undefined,
    reason,
  };
}

/** What the edit changes in the Service's own parts, one entry per child added (+), changed (~) or removed (-). */
export function describeChanges(before: LoadBalancer | undefined, after: LoadBalancer, fe: string): string[] {
  const out: string[] = [];
  const kinds = [
    ["frontend", "frontendIPConfigurations"],
    ["pool", "backendAddressPools"],
    ["probe", "probes"],
    ["rule", "loadBalancingRules"],
  ] as const;
  for (const [label, key] of kinds) {
    const mine = (lb: LoadBalancer | undefined) =>
      new Map(
        ((lb?.[key] ?? []) as { name?: string }[])
          .filter((c) => belongsTo(c.name, fe) || (label === "pool" && isNodePool(c.name)))
          .map((c) => [c.name ?? "", c]),
      );
    const was = mine(before);
    const now = mine(after);
    for (const [name, child] of now) {
      const old = was.get(name);
      if (!old) out.push(`+${label} ${name}`);
      else if (childKey(key, old) !== childKey(key, child)) out.push(`~${label} ${name}`);
    }
    for (const name of was.keys()) if (!now.has(name)) out.push(`-${label} ${name}`);
  }
  if (before?.tags?.[`${TAG.frontendPrefix}${fe}`] !== after.tags?.[`${TAG.frontendPrefix}${fe}`])
    out.push("~record tag");
  return out;
}

function childKey(key: string, child: object): string {
  return canonical({ [key]: [child] });
}

/** One line per operation, for Events, logs and the dry run. */
export function describeOperation(op: Operation): string {
  switch (op.kind) {
    case "createPublicIp":
      return (
        `create ${op.version === "IPv6" ? "IPv6 " : ""}public IP ${op.name} in ${op.resourceGroup}` +
        (op.prefixId ? ` from prefix ${op.prefixId.split("/").pop()}` : "") +
        (op.dnsLabel ? ` with DNS label ${op.dnsLabel}` : "")
      );
    case "tagPublicIp":
      return `set the tags of public IP ${op.name}`;
    case "adoptPublicIp":
      return `adopt public IP ${op.id} (${op.from}'s)${op.address ? ` — address ${op.address} kept` : ""}`;
    case "releaseLegacyFrontend":
      return `take ${CLOUD_PROVIDER_AZURE}'s frontend ${op.frontend}, its rules and probes off load balancer ${op.loadBalancer}, so that ${op.address} moves with the Service`;
    case "setPublicIpDnsLabel":
      return op.dnsLabel
        ? `set the DNS label of public IP ${op.name} to ${op.dnsLabel}`
        : `remove the DNS label of public IP ${op.name}`;
    case "updateLoadBalancer":
      return `${op.create ? "create" : "update"} load balancer ${op.loadBalancer}: ${op.changes.join(", ") || "no change to the Service's parts"}`;
    case "removeFromLoadBalancer":
      return `remove the Service from load balancer ${op.loadBalancer} (${op.reason})${op.deletesIt ? ", deleting it: no frontend is left" : ""}`;
    case "removeLegacySecurityRules":
      return `take ${op.address} out of ${CLOUD_PROVIDER_AZURE}'s rules in network security group ${op.securityGroup} (Portico's rules admit its traffic now)`;
    case "updateSecurityRules":
      return `set the Service's ${op.count} security rule(s) in network security group ${op.securityGroup}`;
    case "removeSecurityRules":
      return `remove the Service's rules from network security group ${op.securityGroup}`;
    case "sharePublicIp":
      return `record the Service as sharing public IP ${op.name}`;
    case "leavePublicIp":
      return describeLeave(op.name, op.expected);
  }
}

function describeLeave(name: string, expected: LeaveOutcome): string {
  switch (expected.kind) {
    case "delete":
      return `delete public IP ${name}`;
    case "offList":
      return `take the Service off public IP ${name}'s list of sharing Services`;
    case "handOver":
      return `hand public IP ${name} over to Service ${expected.toService ?? expected.to}, which still uses it`;
    case "unowned":
      return `leave public IP ${name} to the Services still on its list, all being deleted; the last deletes it`;
  }
}
