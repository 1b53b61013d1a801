// What the speaker makes of the membership's events: each message and event counted, a death and a refutation
// logged. Kept apart from the wiring so that speaker.ts only says what a refutation means for the modes.
import type { Logger } from "pino";
import type { SpeakerMetrics } from "../metrics.ts";
import type { MembershipEvent } from "./memberlist.ts";

export function reportMembershipEvent(
  event: MembershipEvent,
  metrics: SpeakerMetrics,
  log: Logger,
  refuted: () => void,
): void {
  if (event.kind === "sent" || event.kind === "received") {
    metrics.membershipMessages.inc({ direction: event.kind, type: event.type });
    return;
  }
  metrics.membershipEvents.inc({ event: event.kind === "dropped" ? `dropped-${event.reason}` : event.kind });
  if (event.kind === "declared-dead") log.info({ member: event.node }, "speaker declared dead");
  if (event.kind === "refuted") {
    // Others thought this node gone and may have moved its addresses elsewhere: they come back here.
    log.info({ incarnation: event.incarnation }, "refuted own death");
    refuted();
  }
}
