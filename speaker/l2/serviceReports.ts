// What a speaker tells about the Services it decided on: a nodeAssigned Event on each Service whose addresses
// it took on, a noMatchingNode Warning where no node may announce an address, and a count (and a log line) of
// addresses whose pool had to be guessed. Each is written only when it changes, not on every recompute.
import type { V1Service } from "@kubernetes/client-node";
import type { KubeApi } from "../kube/api/client.ts";
import type { Logger } from "pino";
import type { AnnounceRules } from "./announceRules.ts";
import type { AddressAssignment } from "./assignment.ts";
import { recordNodeAssigned, recordNoMatchingNode, type Unmatched } from "../kube/events.ts";
import type { SpeakerMetrics } from "../metrics.ts";
import type { AnnouncedService } from "../serviceView.ts";

export interface ServiceReportsDeps {
  node: string;
  log: Logger;
  metrics: SpeakerMetrics;
  api: KubeApi;
}

export class ServiceReports {
  private readonly d: ServiceReportsDeps;
  /** Services this node announces, with their addresses, to write an Event only when that changes. */
  private servicesWon = new Map<string, string>();
  /** Likewise for Services this node reports as unannounced for want of a node matching their pool. */
  private servicesUnmatched = new Map<string, string>();
  /** The addresses whose pools were last guessed, to log only when that changes. */
  private guessedSeen = "";

  constructor(deps: ServiceReportsDeps) {
    this.d = deps;
  }

  /** Addresses in overlapping pools without a recorded pool: counted, and logged when that changes. */
  guessedPools(announced: readonly AnnouncedService[]): void {
    const guessed = announced.flatMap((s) => (s.guessedPools ?? []).map((address) => `${s.key}@${address}`));
    this.d.metrics.poolsGuessed.set(guessed.length);
    const summary = guessed.join(",");
    if (summary === this.guessedSeen) return;
    this.guessedSeen = summary;
    if (guessed.length > 0)
      this.d.log.info(
        { addresses: guessed },
        "addresses in overlapping pools whose Service records no pool (portico.io/ip-allocated-from-pool): the pool was guessed",
      );
  }

  /** The nodeAssigned Event on each Service whose addresses this node took on. */
  assigned(assignments: ReadonlyMap<string, AddressAssignment>, byKey: ReadonlyMap<string, V1Service>): void {
    const won = new Map<string, string[]>();
    for (const assignment of assignments.values()) {
      if (assignment.announcer !== this.d.node) continue;
      for (const key of assignment.services) won.set(key, [...(won.get(key) ?? []), assignment.address]);
    }
    const next = new Map<string, string>();
    for (const [key, addresses] of won) {
      const summary = addresses.sort().join(",");
      next.set(key, summary);
      const service = byKey.get(key);
      if (service && this.servicesWon.get(key) !== summary) this.recordAssigned(service, addresses);
    }
    this.servicesWon = next;
  }

  /**
   * Addresses nobody announces because of their pool's nodeSelectors or for want of an L2Advertisement: counted
   * by every speaker, and reported on the Service by the one node that would announce them without either.
   */
  unmatched(
    assignments: ReadonlyMap<string, AddressAssignment>,
    byKey: ReadonlyMap<string, V1Service>,
    rules: AnnounceRules,
  ): void {
    this.d.metrics.unmatched.reset();
    const mine = new Map<string, Unmatched[]>();
    for (const { address, pool = "", services, unmatched } of assignments.values()) {
      if (!unmatched) continue;
      const labels = byKey.get(services[0] ?? "")?.metadata?.labels ?? {};
      const reason = rules.reason(pool, labels);
      this.d.metrics.unmatched.inc({ pool, reason });
      if (unmatched.reporter !== this.d.node) continue;
      for (const key of services) mine.set(key, [...(mine.get(key) ?? []), { address, pool, reason }]);
    }
    const next = new Map<string, string>();
    for (const [key, unmatched] of mine) {
      unmatched.sort((a, b) => (a.address < b.address ? -1 : 1));
      const summary = unmatched.map((u) => `${u.address}@${u.pool}:${u.reason}`).join(",");
      next.set(key, summary);
      const service = byKey.get(key);
      if (!service || this.servicesUnmatched.get(key) === summary) continue;
      this.d.log.warn({ service: key, unmatched }, "not announced: no node may announce the address");
      void recordNoMatchingNode(this.d.api, this.d.log, service, this.d.node, unmatched);
    }
    this.servicesUnmatched = next;
  }

  private recordAssigned(service: V1Service, addresses: readonly string[]): void {
    void recordNodeAssigned(this.d.api, this.d.log, service, this.d.node, addresses);
  }
}
