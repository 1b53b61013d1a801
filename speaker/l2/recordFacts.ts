// What this node has to say in its ServiceL2Status records, gathered from the announce decision: the addresses
// it answers for now (not one still being probed, or found in use) and where, those it reports as announced by
// nobody and why, and those another host answered its probe for. Pure; the plan is in l2statusPlan.ts.
import type { V1Service } from "@kubernetes/client-node";
import type { AnnounceRules } from "./announceRules.ts";
import type { AddressAssignment } from "./assignment.ts";
import type { AnnouncedHere, FoundInUse, ReportedHere } from "./statusPlan.ts";

export interface RecordFactsInput {
  readonly node: string;
  readonly assignments: ReadonlyMap<string, AddressAssignment>;
  readonly services: ReadonlyMap<string, V1Service>;
  readonly rules: Pick<AnnounceRules, "reason">;
  /** What this node answers for now. */
  readonly answering: ReadonlySet<string>;
  /** The interfaces this node answers an address on. */
  readonly interfaces: (address: string) => readonly string[];
  /** Another host's MAC, where this node's probe found one. */
  readonly inUse: (address: string) => string | undefined;
}

export function recordFacts(input: RecordFactsInput): {
  announced: AnnouncedHere[];
  reported: ReportedHere[];
  inUse: FoundInUse[];
} {
  const announced: AnnouncedHere[] = [];
  const reported: ReportedHere[] = [];
  const inUse: FoundInUse[] = [];
  for (const { address, pool = "", services, announcer, unmatched } of input.assignments.values()) {
    const mine = announcer === input.node;
    const mac = mine ? input.inUse(address) : undefined;
    for (const key of services) {
      const service = input.services.get(key);
      const uid = service?.metadata?.uid;
      if (!uid) continue;
      if (mac !== undefined) inUse.push({ service: key, uid, inUse: { address, mac } });
      if (mine && input.answering.has(address))
        announced.push({ service: key, uid, address, interfaces: input.interfaces(address) });
      else if (!mine && unmatched?.reporter === input.node) {
        const reason = input.rules.reason(pool, service.metadata?.labels ?? {});
        reported.push({ service: key, uid, notAnnounced: { address, reason } });
      }
    }
  }
  return { announced, reported, inUse };
}
