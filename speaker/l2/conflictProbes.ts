// Which of the addresses elected here are held back because of a conflict probe (io/prober.ts): a new address
// (no ServiceL2Status claims it) is withheld until its probe is done, and announced only if nobody answered;
// one taken over is announced at once and probed alongside, since delaying a failover would cut traffic that
// flows today. What is found is logged, counted, written as a Warning Event on the Services, and kept for the
// records until the address is no longer elected here (a later election probes again).
import type { V1Service } from "@kubernetes/client-node";
import type { KubeApi } from "../kube/api/client.ts";
import type { Logger } from "pino";
import { parseIP } from "../../shared/address.ts";
import type { L2StatusRecord } from "../../shared/l2status.ts";
import { AddressProber, type ProbeTarget } from "../io/prober.ts";
import { recordAddressInUse } from "../kube/events.ts";
import type { SpeakerMetrics } from "../metrics.ts";

interface Probe {
  /** Answered while probed (a takeover), rather than withheld. */
  readonly announced: boolean;
  done: boolean;
  /** Another host's MAC, when one answered. */
  mac?: string;
}

export interface ConflictProbesDeps {
  readonly node: string;
  readonly log: Logger;
  readonly metrics: SpeakerMetrics;
  readonly api: KubeApi;
  /** This node's open interfaces: their MACs are never a conflict. */
  readonly interfaces: () => readonly (ProbeTarget & { readonly name: string })[];
  /** Whether `address` is answered on interface `name` (its L2Advertisements' interfaces). */
  readonly answersOn: (address: string, name: string) => boolean;
  /** A probe ended: the speaker decides again. */
  readonly changed: () => void;
  /** Whether a MAC is a speaker's handing addresses over to this node (its answers are no conflict). */
  readonly handingOver?: (mac: string) => boolean;
}

export class ConflictProbes {
  private readonly deps: ConflictProbesDeps;
  private readonly probes = new Map<string, Probe>();
  private readonly prober: AddressProber;

  constructor(deps: ConflictProbesDeps) {
    this.deps = deps;
    this.prober = new AddressProber(
      () => new Set(deps.interfaces().map((i) => i.mac)),
      undefined,
      deps.handingOver,
    );
  }

  /** Every received frame: answers to a probe under way. */
  seen(frame: Buffer): void {
    this.prober.seen(frame);
  }

  /** Another host's MAC for an address elected here, when a probe found one. */
  inUse(address: string): string | undefined {
    return this.probes.get(address)?.mac;
  }

  /**
   * Removes from `owned` the new addresses still being probed and those another host answered for; starts a
   * probe for each address newly elected here (`answering`: what this node answers for now). `records`:
   * undefined when they cannot be read, and then nothing tells a new address from a takeover, so none waits.
   */
  withhold(
    owned: Map<string, readonly string[] | undefined>,
    answering: ReadonlySet<string>,
    records: readonly L2StatusRecord[] | undefined,
    servicesOf: (address: string) => readonly V1Service[],
  ): void {
    for (const address of this.probes.keys()) if (!owned.has(address)) this.probes.delete(address);
    for (const address of [...owned.keys()]) {
      let probe = this.probes.get(address);
      if (!probe) {
        if (answering.has(address) || !parseIP(address).ok) continue;
        const claimed = !records || records.some((r) => r.status.addresses.includes(address));
        probe = { announced: claimed, done: false };
        this.probes.set(address, probe);
        this.start(address, probe, servicesOf(address));
      }
      if (!probe.announced && (!probe.done || probe.mac !== undefined)) owned.delete(address);
    }
  }

  private start(address: string, probe: Probe, services: readonly V1Service[]): void {
    const { log, metrics, api, node } = this.deps;
    const started = performance.now();
    const targets = () => this.deps.interfaces().filter((i) => this.deps.answersOn(address, i.name));
    void this.prober.probe(address, targets).then((mac) => {
      probe.done = true;
      metrics.probes.inc({ outcome: mac ? "inUse" : "free" });
      if (mac === undefined) {
        log.debug({ address, ms: Math.round(performance.now() - started) }, "address probed: free");
      } else {
        probe.mac = mac;
        const keys = services.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
        log.warn(
          { address, mac, announced: probe.announced, services: keys },
          probe.announced
            ? "address taken over is in use by another host on the LAN"
            : "address is in use by another host on the LAN: not announced",
        );
        for (const service of services)
          void recordAddressInUse(api, log, service, node, { address, mac, announced: probe.announced });
      }
      if (this.probes.get(address) === probe) this.deps.changed();
    });
  }
}
