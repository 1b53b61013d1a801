// Opens one interface's announcer with the speaker's metrics and logging wired in: what every packet socket
// the speaker opens shares, apart from the speaker's own decisions.
import type { Logger } from "pino";
import type { SpeakerMetrics } from "../metrics.ts";
import type { PacketAddon } from "./addon.ts";
import { InterfaceAnnouncer } from "./interfaceAnnouncer.ts";
import type { MulticastGroups } from "./multicastGroups.ts";

export function openAnnouncer(
  addon: PacketAddon,
  iface: { readonly name: string; readonly mac: string },
  config: { readonly maxRepliesPerSecond: number },
  ipv6Groups: MulticastGroups | undefined,
  hooks: {
    readonly metrics: SpeakerMetrics;
    readonly log: Logger;
    /** Every frame received (conflict probes look for answers). */
    readonly frame: (frame: Buffer) => void;
    /** The socket failed: forget it, the next rescan reopens it. */
    readonly failed: () => void;
  },
): InterfaceAnnouncer {
  const { metrics: m, log } = hooks;
  const { name } = iface;
  return new InterfaceAnnouncer(
    addon,
    iface,
    { maxRepliesPerSecond: config.maxRepliesPerSecond, ...(ipv6Groups ? { ipv6Groups } : {}) },
    {
      received: (count) => m.framesReceived.inc({ interface: name }, count),
      replied: (protocol, address) => {
        m.replies.inc({ interface: name, protocol });
        log.debug({ interface: name, protocol, address }, "answered");
      },
      dropped: (reason, count = 1) => m.framesDropped.inc({ interface: name, reason }, count),
      sendFailed: () => m.sendErrors.inc({ interface: name }),
      groupFailed: (group, err) =>
        log.warn({ interface: name, group, err: err.message }, "multicast group membership failed"),
      frame: hooks.frame,
      failed: (errno) => {
        hooks.failed();
        log.warn({ interface: name, errno }, "packet socket failed; reopening at the next rescan");
      },
    },
  );
}
