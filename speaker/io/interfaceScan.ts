// Which of the host's interfaces the speaker answers on, looked at again every --interface-rescan-ms: interfaces
// that appeared (or came up) are opened, those that vanished or changed their MAC are closed.
import type { Logger } from "pino";
import type { SpeakerMetrics } from "../metrics.ts";
import { formatMac } from "../packets/mac.ts";
import type { PacketAddon } from "./addon.ts";
import type { InterfaceAnnouncer } from "./interfaceAnnouncer.ts";
import { selectInterfaces } from "./interfaces.ts";
import type { MulticastGroups } from "./multicastGroups.ts";
import { openAnnouncer } from "./openAnnouncer.ts";

export interface InterfaceScanDeps {
  readonly addon: PacketAddon;
  readonly config: {
    readonly interfaces: readonly string[];
    readonly excludeInterfaces: readonly string[];
    readonly maxRepliesPerSecond: number;
  };
  readonly ipv6Groups: MulticastGroups | undefined;
  readonly metrics: SpeakerMetrics;
  readonly log: Logger;
  /** Every frame received on an interface (conflict probes look for answers). */
  readonly frame: (frame: Buffer) => void;
  /** An interface just opened: give it what it answers for. */
  readonly opened: (announcer: InterfaceAnnouncer) => void;
  /** The set of open interfaces changed. */
  readonly changed: () => void;
}

/** Brings `announcers` (by interface name) in line with the host's interfaces. */
export function rescanInterfaces(announcers: Map<string, InterfaceAnnouncer>, deps: InterfaceScanDeps): void {
  const { log } = deps;
  let available;
  try {
    available = deps.addon.interfaces();
  } catch (err) {
    log.warn({ err: (err as Error).message }, "could not list interfaces");
    return;
  }
  const chosen = selectInterfaces(available, {
    include: deps.config.interfaces,
    exclude: deps.config.excludeInterfaces,
  }).filter((iface) => iface.mac !== null);
  const wanted = new Map(chosen.map((iface) => [iface.name, formatMac(iface.mac!)] as const));
  for (const [name, announcer] of announcers) {
    if (wanted.get(name) !== announcer.mac) {
      announcer.close();
      announcers.delete(name);
      log.info({ interface: name }, "stopped announcing on interface");
      deps.changed();
    }
  }
  for (const [name, mac] of wanted) {
    if (announcers.has(name)) continue;
    try {
      const announcer = openAnnouncer(deps.addon, { name, mac }, deps.config, deps.ipv6Groups, {
        metrics: deps.metrics,
        log,
        frame: deps.frame,
        failed: () => announcers.delete(name),
      });
      announcers.set(name, announcer);
      deps.opened(announcer);
      log.info({ interface: name, mac }, "announcing on interface");
      deps.changed();
    } catch (err) {
      log.warn({ interface: name, err: (err as Error).message }, "could not open packet socket");
    }
  }
}
