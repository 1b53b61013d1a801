// What this node answers ARP and neighbour solicitations for, on which of its interfaces: the L2 mode's
// announcements as the interface announcers (speaker/io/) carry them. Each address is answered on every open
// interface unless its L2Advertisements name some; an address newly answered is announced gratuitously
// (io/takeover.ts), and an interface that opens later is given what it answers at once.
import type { Logger } from "pino";
import type { InterfaceAnnouncer } from "../io/interfaceAnnouncer.ts";
import { TakeoverAnnouncements, type TakeoverOptions } from "../io/takeover.ts";
import type { SpeakerMetrics } from "../metrics.ts";

/** Address → the interfaces it is answered on; undefined: every interface. */
export type Answers = ReadonlyMap<string, readonly string[] | undefined>;

export interface AnsweringDeps {
  readonly log: Logger;
  readonly metrics: SpeakerMetrics;
  readonly gratuitous: TakeoverOptions;
  /** The interfaces the speaker has open, by name (it opens and closes them: speaker.ts). */
  readonly announcers: ReadonlyMap<string, InterfaceAnnouncer>;
  /** Addresses this node answers now that it did not before (whoever held them for it may stop). */
  readonly gained: (addresses: string[]) => void;
}

export class Answering {
  private readonly deps: AnsweringDeps;
  private readonly takeover: TakeoverAnnouncements;
  private owned: ReadonlySet<string> = new Set();
  /** The interfaces each owned address is answered on; absent: every interface (L2Advertisement interfaces). */
  private ownedOn: ReadonlyMap<string, readonly string[]> = new Map();

  constructor(deps: AnsweringDeps) {
    this.deps = deps;
    this.takeover = new TakeoverAnnouncements(
      deps.gratuitous,
      (address) => [...deps.announcers.values()].filter((a) => this.answersOn(address, a.name)),
      (target, protocol, frames) => deps.metrics.gratuitous.inc({ interface: target.name, protocol }, frames),
    );
  }

  /** The addresses this node answers for right now. */
  get addresses(): ReadonlySet<string> {
    return this.owned;
  }

  /** What is answered now, in the shape `apply` takes. */
  current(): Map<string, readonly string[] | undefined> {
    return new Map([...this.owned].map((a) => [a, this.ownedOn.get(a)]));
  }

  /** Whether this node answers for `address` on interface `name`. */
  answersOn(address: string, name: string): boolean {
    const only = this.ownedOn.get(address);
    return only === undefined || only.includes(name);
  }

  /** The interfaces this node answers `address` on now: the ones it opened that its advertisements allow. */
  openOn(address: string): string[] {
    return [...this.deps.announcers.keys()].filter((name) => this.answersOn(address, name)).sort();
  }

  /** An interface just opened: it answers what this node answers on it, announced gratuitously. */
  opened(announcer: InterfaceAnnouncer): void {
    const owned = this.ownedOnInterface(announcer.name);
    announcer.setOwned(owned);
    this.takeover.announceOn(announcer, owned);
  }

  /**
   * Others thought this node gone and may have moved its addresses (and the neighbours' caches) elsewhere; once
   * they hear its refutation the addresses come back here, so they are announced anew.
   */
  refuted(): void {
    this.takeover.restart(this.owned);
  }

  stop(): void {
    this.takeover.stop();
  }

  apply(owned: Answers): void {
    const { announcers, log, metrics } = this.deps;
    const on = new Map<string, readonly string[]>();
    for (const [address, names] of owned) if (names !== undefined) on.set(address, names);
    const where = (map: ReadonlyMap<string, readonly string[]>) =>
      [...map].map(([address, names]) => `${address}:${names.join("+")}`).join(",");
    const changed =
      owned.size !== this.owned.size ||
      [...owned.keys()].some((a) => !this.owned.has(a)) ||
      where(on) !== where(this.ownedOn);
    metrics.elections.inc({ outcome: changed ? "changed" : "unchanged" });
    if (!changed) return;
    const addresses = new Set(owned.keys());
    const gained = [...addresses].filter((a) => !this.owned.has(a));
    const lost = [...this.owned].filter((a) => !addresses.has(a));
    this.owned = addresses;
    this.ownedOn = on;
    for (const announcer of announcers.values()) announcer.setOwned(this.ownedOnInterface(announcer.name));
    // Only once answered here: whoever holds these for this node stops answering on this word.
    if (gained.length > 0) this.deps.gained(gained);
    this.takeover.update(addresses);
    metrics.announced.set(addresses.size);
    log.info(
      { gained, lost, owned: [...addresses], ...(on.size > 0 ? { interfaces: Object.fromEntries(on) } : {}) },
      "announced addresses changed",
    );
    for (const [address, names] of on) {
      if (!names.some((name) => announcers.has(name))) {
        log.warn(
          { address, interfaces: names, open: [...announcers.keys()] },
          "no interface its L2Advertisements name is one this speaker announces on (missing, or excluded by --exclude-interfaces); the address is not answered",
        );
      }
    }
  }

  /** The owned addresses answered on interface `name`. */
  private ownedOnInterface(name: string): ReadonlySet<string> {
    if (this.ownedOn.size === 0) return this.owned;
    return new Set([...this.owned].filter((address) => this.answersOn(address, name)));
  }
}
