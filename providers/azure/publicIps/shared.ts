// Portico's own public IP shared by several Services, reference-counted in its tags. The Service it was made for
// owns it (portico.io-service-uid); the others that name it (azure-pip-name, or its address) are listed in
// portico.io-shared-with, as cloud-provider-azure lists a public IP's Services in its k8s-azure-service tag.
//
// Leaving is decided from the public IP as read at the moment of the write (plan/apply.ts,
// publicIps/writes.ts), never from the observation the plan was made from: Services deleted together leave in
// any order, each from its own stale observation, and a decision taken from one (hand the public IP to a
// sharer that has itself left since) left the public IP owned by a Service already gone. From a fresh read,
// under If-Match, the leaves are serialized: each sees who is still on the tags. A Service that leaves takes
// itself off; the owner leaving hands the public IP to a Service still on the list that is not being deleted;
// with none, the public IP is nobody's and the Services still on the list (each being deleted, each still to
// leave) hold it; the last one out deletes it. A Service on the tags that no longer exists will never leave,
// and counts as gone. Pure.
import { ConfigurationError } from "../../errors.ts";
import type { Observed, PublicIPAddress } from "../model.ts";
import { frontendName, TAG } from "../names.ts";
import { recordTag } from "../loadBalancer/loadBalancerEdit.ts";

/** UIDs are 36 characters, and a tag value holds at most 256: six sharers besides the owner. */
export const MAX_SHARERS = 6;

/** What a Service leaving a public IP does to it, as decided from its tags. */
export type LeaveOutcome =
  /** Taken off the list of sharers; the owner keeps it. */
  | { kind: "offList" }
  /** The owner goes; a sharer that stays takes it over. */
  | { kind: "handOver"; to: string; toService?: string }
  /** The owner goes and every Service left on the list is being deleted: nobody owns it, they hold it. */
  | { kind: "unowned" }
  /** Nobody is left: the public IP goes. */
  | { kind: "delete" };

export type SharingOperation =
  | { kind: "sharePublicIp"; name: string; resourceGroup: string; uid: string }
  /** `expected`: the outcome the observation gives; the write decides again from the public IP as it is then. */
  | { kind: "leavePublicIp"; name: string; resourceGroup: string; uid: string; expected: LeaveOutcome };

/**
 * Whom the Services on a public IP's tags are, as far as the controller knows: a Service that exists and is not
 * being deleted may own it; one being deleted still has to leave; one that no longer exists never will.
 */
export interface Holders {
  state(uid: string): "live" | "deleting" | "gone";
  /** `namespace/name`, when known. */
  name(uid: string): string | undefined;
}

/**
 * What an observation alone tells of the holders: nothing of their state (each counts as live, as the
 * controller's cache would have it), their names from the load balancers' record tags.
 */
export function observedHolders(observed: Observed): Holders {
  return {
    state: () => "live",
    name: (uid) => {
      // A sharer's frontend of either family records its name (names.ts).
      const tags = [recordTag(frontendName(uid)), recordTag(frontendName(uid, "IPv6"))];
      for (const lb of observed.loadBalancers)
        for (const tag of tags) if (lb.tags?.[tag] !== undefined) return lb.tags[tag];
      return undefined;
    },
  };
}

export function sharersOf(pip: { tags?: Record<string, string> }): string[] {
  return (pip.tags?.[TAG.sharedWith] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Refuses a Service joining a public IP whose list is full. */
export function assertRoomToShare(pip: PublicIPAddress, uid: string, field: string): void {
  const sharers = sharersOf(pip);
  if (!sharers.includes(uid) && sharers.length >= MAX_SHARERS)
    throw new ConfigurationError(
      "PublicIPShareLimit",
      field,
      `public IP ${pip.name} is already shared by ${MAX_SHARERS + 1} Services, all its tags can record`,
      "create a Standard static public IP yourself for a wider sharing, or use another public IP",
    );
}

/** Whether the Service `uid` is on the public IP's tags, as owner or sharer. */
export function holds(tags: Record<string, string>, uid: string): boolean {
  return tags[TAG.serviceUid] === uid || sharersOf({ tags }).includes(uid);
}

/** What the Service `uid` leaving a public IP with these tags does; undefined when it is not on them. */
export function leaveOutcome(
  tags: Record<string, string>,
  uid: string,
  holders: Holders,
): LeaveOutcome | undefined {
  if (!holds(tags, uid)) return undefined;
  const owner = tags[TAG.serviceUid];
  const staying = (u: string) => u !== uid && holders.state(u) !== "gone";
  const sharers = sharersOf({ tags }).filter(staying);
  const ownerStays = owner !== undefined && staying(owner);
  if (!ownerStays && !sharers.length) return { kind: "delete" };
  if (ownerStays) return { kind: "offList" };
  const heir = sharers.find((u) => holders.state(u) === "live");
  if (!heir) return { kind: "unowned" };
  const toService = holders.name(heir);
  return { kind: "handOver", to: heir, ...(toService ? { toService } : {}) };
}

/** The tags after `uid` left with `outcome` (not "delete"), from the tags it was decided on. */
export function tagsAfterLeaving(
  tags: Record<string, string>,
  uid: string,
  outcome: Exclude<LeaveOutcome, { kind: "delete" }>,
  holders: Holders,
): Record<string, string> {
  const next = { ...tags };
  // Who never leaves (gone) is dropped with the leaver.
  const list = sharersOf({ tags }).filter((u) => u !== uid && holders.state(u) !== "gone");
  if (outcome.kind === "handOver") {
    next[TAG.serviceUid] = outcome.to;
    if (outcome.toService) next[TAG.service] = outcome.toService;
    else delete next[TAG.service];
    return withList(
      next,
      list.filter((u) => u !== outcome.to),
    );
  }
  if (outcome.kind === "unowned") {
    delete next[TAG.serviceUid];
    delete next[TAG.service];
  }
  return withList(next, list);
}

/** The tags after `uid` joined the list, from the tags as read now (so a concurrent change is not lost). */
export function tagsAfterJoining(tags: Record<string, string>, uid: string): Record<string, string> {
  if (holds(tags, uid)) return tags;
  return withList({ ...tags }, [...sharersOf({ tags }), uid]);
}

function withList(tags: Record<string, string>, uids: string[]): Record<string, string> {
  if (uids.length) tags[TAG.sharedWith] = uids.join(",");
  else delete tags[TAG.sharedWith];
  return tags;
}

/**
 * What a leave operation does on the public IP's tags as read when it is written: decided again from them (its
 * `expected` was decided from an observation that other Services' leaves may have overtaken).
 */
export function settleLeave(
  op: Extract<SharingOperation, { kind: "leavePublicIp" }>,
  tags: Record<string, string>,
  holders: Holders,
): { delete: true } | { tags: Record<string, string> } | undefined {
  const outcome = leaveOutcome(tags, op.uid, holders);
  if (!outcome) return undefined;
  if (outcome.kind === "delete") return { delete: true };
  return { tags: tagsAfterLeaving(tags, op.uid, outcome, holders) };
}
