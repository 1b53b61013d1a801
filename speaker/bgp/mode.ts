// The BGP mode as the speaker sees it (modes/mode.ts): the speaker's view turned into what the announcer beside
// it renders for FRR — this node's labels (which peers it has), whether it may advertise at all, and the Services'
// UIDs its records are owned by. A departing node withdraws its routes by itself: it renders none once the view
// says it leaves, and waits for FRR to confirm.
import type { Logger } from "pino";
import type { Mode, SpeakerView, StopReason } from "../modes/mode.ts";
import type { AnnouncePool } from "../pools.ts";
import { schedulableNodes, serviceKey, type AnnouncedService } from "../serviceView.ts";
import { BgpAnnouncer } from "./announcer.ts";

/** How long a stopping speaker waits for FRR to withdraw its routes before it exits anyway. */
const BGP_WITHDRAW_MS = 5000;

export type BgpModeOptions = ConstructorParameters<typeof BgpAnnouncer>[0];

export class BgpMode implements Mode {
  readonly name = "bgp";
  readonly departure = "withdraw";
  private readonly announcer: BgpAnnouncer;
  private readonly log: Logger;

  constructor(options: BgpModeOptions) {
    this.announcer = new BgpAnnouncer(options);
    this.log = options.log;
  }

  start(): void {
    this.announcer.start();
  }

  claims(pools: readonly AnnouncePool[]): ReadonlySet<string> {
    return this.announcer.selectedPools(pools);
  }

  update(view: SpeakerView, served: readonly AnnouncedService[]): void {
    const { self, nodes, live, leaving } = view;
    const own = nodes.find((n) => n.metadata?.name === self);
    // Among the nodes whose speakers are alive, this one counted even before the membership says so.
    const withSelf = nodes.filter((n) => n === own || live.has(n.metadata?.name ?? ""));
    this.announcer.update({
      nodeLabels: own?.metadata?.labels ?? {},
      uids: new Map(view.services.map((s) => [serviceKey(s), s.metadata?.uid ?? ""] as const)),
      live,
      eligible: !leaving && schedulableNodes(withSelf).has(self),
      eligibleForLocal: !leaving && schedulableNodes(withSelf, "Local").has(self),
      services: served,
      pools: view.pools,
    });
  }

  /** FRR keeps what it was last given: nothing is rendered before the view is complete. */
  notReady(): void {}

  get announcing(): boolean {
    return this.announcer.advertising;
  }

  async withdrawn(): Promise<boolean> {
    const applied = await this.announcer.applied(BGP_WITHDRAW_MS);
    if (!applied) this.log.warn("FRR did not confirm the withdrawal in time; stopping anyway");
    return applied;
  }

  stop(reason: StopReason): void {
    this.announcer.stop(reason);
  }
}
