// What every way of announcing addresses is to the speaker: a mode (L2 in speaker/l2/, BGP in speaker/bgp/, peers
// that never import each other) is given the speaker's view of the cluster and the membership, announces from it,
// and stops for a reason. The speaker (speaker.ts) owns the cache, the membership and the I/O and hands every mode
// the same view; which mode serves which pool is decided in one place, the arbiter (arbiter.ts), from the pools each
// mode claims — so a further mode is one more implementation of this interface, one more rule there and one more
// entry in the speaker's list of modes.
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";

export type ModeName = "l2" | "bgp";

/**
 * Why a speaker stops announcing: it leaves (its announcements are withdrawn, or taken over by other nodes), or
 * the DaemonSet replaces its pod on the same node (they stay for the new pod).
 */
export type StopReason = "withdrawn" | "restarting";

/** The speaker's view of the cluster at one decision: the same for every mode. */
export interface SpeakerView {
  /** This node's name. */
  readonly self: string;
  readonly nodes: readonly V1Node[];
  /** Every Service the speaker sees (for what records need of them: their UIDs, their objects for Events). */
  readonly services: readonly V1Service[];
  /** The pools as read from Portico's and MetalLB's IPAddressPools. */
  readonly pools: readonly AnnouncePool[];
  /** Speakers alive now; without this one when it leaves. */
  readonly live: ReadonlySet<string>;
  /** This node leaves (SIGTERM, not replaced in place): it is no longer a candidate for anything. */
  readonly leaving: boolean;
}

export interface Mode {
  readonly name: ModeName;
  /** The speaker's caches are synced and its membership started: the mode's own loops may begin. */
  start(): void;
  /** The pools this mode's own advertisements select in the current configuration (arbiter.ts weighs them). */
  claims(pools: readonly AnnouncePool[]): ReadonlySet<string>;
  /** Decides from the view and announces the addresses the arbiter gave this mode (`served`). */
  update(view: SpeakerView, served: readonly AnnouncedService[]): void;
  /** The view is not complete yet (caches syncing, membership settling): nothing is to be announced from it. */
  notReady(): void;
  /** Whether this node announces anything now (only then is a stop in place worth asking about). */
  readonly announcing: boolean;
  /**
   * How a departing node's announcements leave it: `withdraw`, by this mode alone as soon as the view says the
   * node leaves (BGP renders no routes); `handover`, by other nodes taking them over once the membership hears of
   * the departure (L2).
   */
  readonly departure: "withdraw" | "handover";
  /** Waits, for at most the mode's own time, until its announcements are gone from this node: true when they are. */
  withdrawn(): Promise<boolean>;
  /** Stops announcing, leaving behind what `reason` asks for. */
  stop(reason: StopReason): void;
}
