// Make-before-break: when the election moves an address away from this node (a restarted speaker is back, a
// node was relabelled, a pool or advertisement edited, this speaker is shutting down), this node keeps
// answering it until the new announcer says it answers it too, and only then stops. Stopping at once, as
// the election alone would have it, leaves the address unanswered for as long as the new announcer takes to
// start: a restarted speaker waits its membership timeout first (500 ms), and informers deliver the same
// edit to different nodes at different moments. Holding costs an overlap of one message's trip, in which
// both nodes answer (harmless for ARP and NDP: the requester keeps the last answer, and both point at nodes
// that serve the Service). A hold is bounded, so an announcer that never confirms cannot keep it forever.
//
// Pure: the same inputs give the same plan, so every case is unit-tested.

/** Interfaces an address is answered on; undefined for every interface. */
export type Interfaces = readonly string[] | undefined;

export interface Hold {
  /** The elected announcer this node waits for. */
  readonly to: string;
  /** When the hold began (kept when the announcer it waits for changes, so a hold never restarts). */
  readonly since: number;
}

export interface HandoverInput {
  readonly self: string;
  readonly now: number;
  /** After this long a hold ends whether or not the new announcer confirmed. */
  readonly maxHoldMs: number;
  /** The addresses this node is elected for and may answer now (conflict probes already applied). */
  readonly won: ReadonlyMap<string, Interfaces>;
  /** What this node answers at this moment. */
  readonly answering: ReadonlyMap<string, Interfaces>;
  /** The elected announcer of each address that has one (absent or undefined: nobody may announce it). */
  readonly winners: ReadonlyMap<string, string | undefined>;
  /** The holds of the previous plan. */
  readonly held: ReadonlyMap<string, Hold>;
  /** Whether `node` said it answers `address` since this node began holding it. */
  readonly confirmed: (address: string, node: string) => boolean;
}

export type ReleaseReason =
  /** The new announcer answers it. */
  | "confirmed"
  /** It waited maxHoldMs. */
  | "expired"
  /** Nobody may announce it any more (Service gone, no ready endpoint, no eligible node). */
  | "unannounced"
  /** Still elected here but held back (a conflict probe): this node must not answer it either. */
  | "withheld";

export interface HandoverPlan {
  /** What to answer: everything won, plus the held addresses on the interfaces they were answered on. */
  readonly answer: Map<string, Interfaces>;
  readonly held: Map<string, Hold>;
  /** The held addresses grouped by the announcer they wait for, sorted: whom to ask. */
  readonly waitingFor: Map<string, string[]>;
  readonly released: { readonly address: string; readonly reason: ReleaseReason; readonly to?: string }[];
}

export function planHandover(input: HandoverInput): HandoverPlan {
  const answer = new Map<string, Interfaces>(input.won);
  const held = new Map<string, Hold>();
  const waitingFor = new Map<string, string[]>();
  const released: HandoverPlan["released"][number][] = [];
  for (const [address, interfaces] of [...input.answering].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (input.won.has(address)) continue;
    const to = input.winners.get(address);
    if (to === undefined) {
      released.push({ address, reason: "unannounced" });
      continue;
    }
    if (to === input.self) {
      released.push({ address, reason: "withheld" });
      continue;
    }
    if (input.confirmed(address, to)) {
      released.push({ address, reason: "confirmed", to });
      continue;
    }
    const since = input.held.get(address)?.since ?? input.now;
    if (input.now - since >= input.maxHoldMs) {
      released.push({ address, reason: "expired", to });
      continue;
    }
    answer.set(address, interfaces);
    held.set(address, { to, since });
    waitingFor.set(to, [...(waitingFor.get(to) ?? []), address]);
  }
  return { answer, held, waitingFor, released };
}

/** The earliest moment a hold expires, for a timer; undefined without holds. */
export function nextExpiry(held: ReadonlyMap<string, Hold>, maxHoldMs: number): number | undefined {
  let earliest: number | undefined;
  for (const hold of held.values()) {
    const at = hold.since + maxHoldMs;
    if (earliest === undefined || at < earliest) earliest = at;
  }
  return earliest;
}
