// The BGP mode of one speaker: turns the cluster's state into FRR's configuration for this node (through the
// pure modules beside it), hands it to the FRR agent through a shared file, and reports what FRR says about
// the sessions: metrics, logs, and each Portico BGPPeer's status (one entry per node under status.sessions,
// merge-patched so speakers never overwrite each other's).
import { KubeApiError, resourcePath, type KubeApi } from "../kube/api/client.ts";
import type { Logger } from "pino";
import type { Labels } from "../../shared/labelSelector.ts";
import type { BgpObjects } from "../kube/bgpWatches.ts";
import type { SpeakerMetrics } from "../metrics.ts";
import type { AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";
import { readBgpAdvertisements, type BgpAdvertisement } from "./advertisements.ts";
import { renderFrrConfig } from "./frrConfig.ts";
import { FrrFiles } from "./frrFiles.ts";
import { PasswordSecrets } from "./passwords.ts";
import { peersOfNode, readBfdProfiles, readPeers, type BfdProfile, type BgpPeer } from "./peers.ts";
import { bgpRoutes, bgpSelectedPools, type AdvertisedPrefix } from "./routes.ts";
import { BGP_RECORDS, planBgpStatuses } from "./statusPlan.ts";
import { readBgpStatus, type BgpStatusFields } from "../../shared/bgpStatus.ts";
import { RecordWriter } from "../kube/recordWriter.ts";
import type { SessionState } from "./sessions.ts";

const STATUS_POLL_MS = 1000;

export interface BgpState {
  readonly nodeLabels: Labels;
  /** namespace/name → UID, of the Services the speaker sees (records are owned by their Service). */
  readonly uids: ReadonlyMap<string, string>;
  /** Speakers alive now (one of them cleans up the records of dead ones). */
  readonly live: ReadonlySet<string>;
  /** Ready, not leaving (shared/nodeEligibility.ts), not stopping. */
  readonly eligible: boolean;
  /** The same for Services with externalTrafficPolicy Local, for which a cordoned node stays. */
  readonly eligibleForLocal: boolean;
  readonly services: readonly AnnouncedService[];
  readonly pools: readonly AnnouncePool[];
}

interface Config {
  peers: BgpPeer[];
  ads: BgpAdvertisement[];
  profiles: BfdProfile[];
}

export class BgpAnnouncer {
  private readonly node: string;
  private readonly log: Logger;
  private readonly metrics: SpeakerMetrics;
  private readonly files: FrrFiles;
  private readonly passwords: PasswordSecrets;
  private readonly api: KubeApi;
  private readonly objects: () => BgpObjects | undefined;
  private last: { seen: string; config: Config } = { seen: "", config: { peers: [], ads: [], profiles: [] } };
  private generation = 0;
  /** The generation of the configuration last written (an unchanged render is not written again). */
  private written = 0;
  private toldProblems = new Set<string>();
  /** The peers this node was last configured with (key → peer). */
  private configured = new Map<string, BgpPeer>();
  /** What was last written to each Portico BGPPeer's status for this node. */
  private readonly reported = new Map<string, string>();
  /** What the configuration last written advertises, and what the one FRR last confirmed does. */
  private writtenPrefixes: readonly AdvertisedPrefix[] = [];
  private appliedPrefixes: readonly AdvertisedPrefix[] = [];
  private lastState: BgpState | undefined;
  private readonly records: RecordWriter<BgpStatusFields>;
  private readonly recordsInstalled: () => boolean;
  private timer: NodeJS.Timeout | undefined;
  /**
   * Why this node's speaker stops: its routes were withdrawn (it leaves), or they stay with FRR for the pod that
   * replaces it on the node (peers that restart gracefully keep them meanwhile).
   */
  private stopping: "withdrawn" | "restarting" | undefined;

  constructor(options: {
    node: string;
    frrDir: string;
    secretNamespace: string;
    api: KubeApi;
    log: Logger;
    metrics: SpeakerMetrics;
    objects: () => BgpObjects | undefined;
    recordsInstalled: () => boolean;
    changed: () => void;
  }) {
    this.node = options.node;
    this.log = options.log.child({ mode: "bgp" });
    this.metrics = options.metrics;
    this.files = new FrrFiles(options.frrDir);
    this.passwords = new PasswordSecrets(options.api, options.secretNamespace, options.changed);
    this.api = options.api;
    this.objects = options.objects;
    this.recordsInstalled = options.recordsInstalled;
    this.records = new RecordWriter(
      BGP_RECORDS,
      options.api,
      this.log,
      (outcome) => options.metrics.bgpStatusWrites.inc({ outcome }),
      options.changed,
    );
  }

  start(): void {
    this.timer = setInterval(() => void this.pollStatus(), STATUS_POLL_MS);
  }

  /**
   * Stops reading FRR's status, with the node's records brought to what its peers keep: nothing when its routes
   * were withdrawn; when the pod restarts in place, what peers that restart gracefully hold for the next one. Then
   * tells FRR's containers they may stop.
   */
  stop(why: "withdrawn" | "restarting"): void {
    this.stopping = why;
    if (this.timer) clearInterval(this.timer);
    const status = this.files.readStatus();
    if (status) this.writeRecords(status.sessions);
    this.files.release();
  }

  /** Whether FRR advertises anything for this node (as it last confirmed). */
  get advertising(): boolean {
    return this.appliedPrefixes.length > 0;
  }

  /**
   * The pools some BGPAdvertisement selects in the current configuration (the L2 mode leaves those no
   * L2Advertisement selects to BGP: modes/arbiter.ts).
   */
  selectedPools(pools: readonly AnnouncePool[]): Set<string> {
    return bgpSelectedPools(pools, this.config().ads);
  }

  /** Renders this node's FRR configuration from the cluster's state and writes it when it changed. */
  update(state: BgpState): void {
    const { peers: all, ads, profiles } = this.config();
    const peers = peersOfNode(all, state.nodeLabels);
    this.lastState = state;
    const routes = bgpRoutes({ node: this.node, ...state, ads, peers });
    const problems = [...routes.problems];
    const withPasswords = peers.map((peer) => {
      if (!peer.passwordSecret) return peer;
      const secret = this.passwords.get(peer.passwordSecret);
      if (secret.problem) problems.push(`BGPPeer ${peer.key}: ${secret.problem}`);
      return secret.password ? { ...peer, resolvedPassword: secret.password } : peer;
    });
    this.generation += 1;
    const render = renderFrrConfig({
      hostname: this.node,
      peers: withPasswords,
      prefixes: routes.prefixes,
      bfdProfiles: profiles,
      generation: this.generation,
    });
    problems.push(...render.problems);
    this.tell(problems);
    this.configured = new Map(
      peers.filter((p) => render.peers.includes(p.key)).map((p) => [p.key, p] as const),
    );
    this.metrics.bgpAdvertised.set(routes.prefixes.length);
    if (this.files.write(render.text)) {
      this.written = this.generation;
      this.writtenPrefixes = routes.prefixes;
      this.metrics.frrReloads.inc({ outcome: "written" });
      this.log.info(
        { generation: this.generation, prefixes: routes.prefixes.length, peers: render.peers },
        "FRR configuration written",
      );
    }
  }

  /** Waits (at most `timeoutMs`) until the agent applied the last configuration written. */
  async applied(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const status = this.files.readStatus();
      if (status?.reload.ok && (status.reload.generation ?? 0) >= this.written) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  private config(): Config {
    const objects = this.objects();
    if (!objects) return this.last.config;
    // The records are output, not configuration: they change all the time and decide nothing.
    const { records: _records, ...inputs } = objects;
    const seen = Object.values(inputs)
      .map((list: readonly { metadata?: { name?: string; resourceVersion?: string } }[]) =>
        list.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).join(","),
      )
      .join(";");
    if (seen === this.last.seen) return this.last.config;
    const reads = [readPeers(objects.peers, "portico.io"), readPeers(objects.metallbPeers, "metallb.io")];
    const adReads = [
      readBgpAdvertisements(objects.ads, "portico.io"),
      readBgpAdvertisements(objects.metallbAds, "metallb.io"),
    ];
    const profileReads = [
      readBfdProfiles(objects.bfdProfiles, "portico.io"),
      readBfdProfiles(objects.metallbBfdProfiles, "metallb.io"),
    ];
    for (const { problems } of [...reads, ...adReads, ...profileReads])
      for (const problem of problems) this.log.warn({ problem }, "BGP configuration entry not used");
    const config = {
      peers: reads.flatMap((r) => r.peers),
      ads: adReads.flatMap((r) => r.ads),
      profiles: profileReads.flatMap((r) => r.profiles),
    };
    this.last = { seen, config };
    return config;
  }

  /** Each problem is logged once while it lasts. */
  private tell(problems: string[]): void {
    const now = new Set(problems);
    for (const problem of now)
      if (!this.toldProblems.has(problem)) this.log.warn({ problem }, "BGP configuration problem");
    this.toldProblems = now;
  }

  /** Reads the agent's status: metrics, a log line when a reload failed, and the peers' statuses. */
  private async pollStatus(): Promise<void> {
    const status = this.files.readStatus();
    if (!status) return;
    if (status.reload.ok === false && status.reload.generation === this.written)
      this.log.warn(
        { generation: status.reload.generation, output: status.reload.output },
        "FRR could not apply the configuration",
      );
    this.metrics.bgpSessions.reset();
    this.metrics.bgpPrefixesSent.reset();
    for (const peer of this.configured.values()) {
      const session = status.sessions.get(peer.address);
      this.metrics.bgpSessions.set({ peer: peer.key }, session?.established ? 1 : 0);
      this.metrics.bgpPrefixesSent.set({ peer: peer.key }, session?.prefixesSent ?? 0);
    }
    if (status.reload.ok && (status.reload.generation ?? 0) >= this.written)
      this.appliedPrefixes = this.writtenPrefixes;
    this.writeRecords(status.sessions);
    await this.reportSessions(status.sessions);
  }

  /** The ServiceBGPStatus records: which Services this node advertises, to which peers, over live sessions. */
  private writeRecords(sessions: ReadonlyMap<string, SessionState>): void {
    const state = this.lastState;
    const objects = this.objects();
    if (!state || !objects || !this.recordsInstalled()) return;
    const established = new Map<string, string>();
    for (const peer of this.configured.values()) {
      const kept = this.stopping === undefined || (this.stopping === "restarting" && peer.gracefulRestart);
      if (kept && sessions.get(peer.address)?.established) established.set(peer.key, peer.name);
    }
    const services = new Map<string, { uid: string; addresses: readonly string[] }>();
    for (const service of state.services) {
      const uid = state.uids.get(service.key);
      if (uid) services.set(service.key, { uid, addresses: service.addresses });
    }
    const existing = objects.records.flatMap((o) => readBgpStatus(o) ?? []);
    this.records.apply(
      planBgpStatuses({
        node: this.node,
        prefixes: this.stopping === "withdrawn" ? [] : this.appliedPrefixes,
        established,
        services,
        existing,
        live: state.live,
      }),
      new Set(existing.map((r) => `${r.namespace}/${r.name}`)),
    );
  }

  /** Writes this node's entry in each Portico BGPPeer's status.sessions when it changed, and removes stale ones. */
  private async reportSessions(sessions: ReadonlyMap<string, SessionState>): Promise<void> {
    const wanted = new Map<string, Record<string, unknown> | null>();
    for (const peer of this.configured.values()) {
      if (peer.group !== "portico.io") continue;
      const session = sessions.get(peer.address);
      wanted.set(peer.name, {
        state: session?.state ?? "NotConfigured",
        established: session?.established ?? false,
        prefixesSent: session?.prefixesSent ?? 0,
        ...(session?.bfd ? { bfd: session.bfd } : {}),
        ...(session?.lastError ? { lastError: session.lastError } : {}),
      });
    }
    for (const name of this.reported.keys()) if (!wanted.has(name)) wanted.set(name, null);
    for (const [name, entry] of wanted) {
      const text = JSON.stringify(entry);
      if (this.reported.get(name) === text) continue;
      try {
        const path = resourcePath({
          group: "portico.io",
          version: "v1alpha1",
          plural: "bgppeers",
          name,
          subresource: "status",
        });
        await this.api.mergePatch(path, { status: { sessions: { [this.node]: entry } } });
        if (entry === null) this.reported.delete(name);
        else this.reported.set(name, text);
      } catch (err) {
        // A peer deleted meanwhile has no status left to clean; anything else is tried again next time.
        if (err instanceof KubeApiError && err.code === 404) this.reported.delete(name);
        else
          this.log.debug({ peer: name, err: (err as Error).message }, "could not write the BGPPeer's status");
      }
    }
  }
}
