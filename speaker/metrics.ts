// The speaker's Prometheus metrics (served by shared/metricsServer.ts with /healthz and /readyz).
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

const EVENT_LOOP_PRECISION_MS = 50;

export class SpeakerMetrics {
  readonly registry = new Registry();
  readonly replies = new Counter({
    name: "portico_speaker_requests_answered_total",
    help: "ARP requests and Neighbor Solicitations answered, by interface and protocol",
    labelNames: ["interface", "protocol"],
    registers: [this.registry],
  });
  readonly gratuitous = new Counter({
    name: "portico_speaker_gratuitous_sent_total",
    help: "Gratuitous ARP and unsolicited Neighbor Advertisement frames sent, by interface and protocol",
    labelNames: ["interface", "protocol"],
    registers: [this.registry],
  });
  readonly framesReceived = new Counter({
    name: "portico_speaker_frames_received_total",
    help: "ARP and Neighbor Solicitation frames read from the packet sockets",
    labelNames: ["interface"],
    registers: [this.registry],
  });
  readonly framesDropped = new Counter({
    name: "portico_speaker_frames_dropped_total",
    help: "Frames dropped: malformed (by reason), rate-limited, or lost in the kernel because the speaker fell behind",
    labelNames: ["interface", "reason"],
    registers: [this.registry],
  });
  readonly sendErrors = new Counter({
    name: "portico_speaker_send_errors_total",
    help: "Frames the kernel refused to send",
    labelNames: ["interface"],
    registers: [this.registry],
  });
  readonly elections = new Counter({
    name: "portico_speaker_elections_total",
    help: "Announce decisions recomputed, by whether this node's addresses changed",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly announced = new Gauge({
    name: "portico_speaker_announced_addresses",
    help: "Addresses this node answers for",
    registers: [this.registry],
  });
  readonly unmatched = new Gauge({
    name: "portico_speaker_addresses_without_matching_node",
    help: "Addresses nobody announces because the nodeSelectors of their pool or its L2Advertisements match none of the nodes that could (reason noMatchingNode), or no L2Advertisement selects the pool (reason noAdvertisement); every speaker reports the same count",
    labelNames: ["pool", "reason"],
    registers: [this.registry],
  });
  readonly poolsGuessed = new Gauge({
    name: "portico_speaker_addresses_pool_guessed",
    help: "Addresses in overlapping IPAddressPools whose Service records no pool (portico.io/ip-allocated-from-pool or metallb.io/ip-allocated-from-pool), so the speaker guessed which pool's node selectors apply",
    registers: [this.registry],
  });
  readonly l2StatusWrites = new Counter({
    name: "portico_speaker_l2status_writes_total",
    help: "Writes of ServiceL2Status records (created, updated, deleted, failed)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly probes = new Counter({
    name: "portico_speaker_address_probes_total",
    help: "ARP probes of addresses before (or, on a takeover, while) announcing them: free, or inUse by another host on the LAN",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly liveMembers = new Gauge({
    name: "portico_speaker_live_members",
    help: "Speakers this node believes alive, itself included",
    registers: [this.registry],
  });
  readonly membershipMessages = new Counter({
    name: "portico_speaker_membership_messages_total",
    help: "Membership datagrams by direction and type",
    labelNames: ["direction", "type"],
    registers: [this.registry],
  });
  readonly bgpSessions = new Gauge({
    name: "portico_speaker_bgp_session_up",
    help: "1 while the BGP session with the peer is Established, else 0 (BGP mode)",
    labelNames: ["peer"],
    registers: [this.registry],
  });
  readonly bgpPrefixesSent = new Gauge({
    name: "portico_speaker_bgp_prefixes_sent",
    help: "Prefixes this node advertises to the peer, as FRR counts them (BGP mode)",
    labelNames: ["peer"],
    registers: [this.registry],
  });
  readonly bgpAdvertised = new Gauge({
    name: "portico_speaker_bgp_advertised_prefixes",
    help: "Prefixes this node's FRR configuration advertises (BGP mode)",
    registers: [this.registry],
  });
  readonly bgpStatusWrites = new Counter({
    name: "portico_speaker_bgpstatus_writes_total",
    help: "ServiceBGPStatus records written, by outcome (created, updated, deleted, failed)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly frrReloads = new Counter({
    name: "portico_speaker_frr_reloads_total",
    help: "FRR configurations written for the agent to apply, and the agent's outcome (written, applied, failed)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly membershipEvents = new Counter({
    name: "portico_speaker_membership_events_total",
    help: "Membership events: declared-dead, refuted, sync, dropped datagrams",
    labelNames: ["event"],
    registers: [this.registry],
  });

  constructor() {
    // The event-loop delay monitor wakes the loop at its precision: prom-client's 10 ms costs an idle speaker
    // ~0.2% of a core (a fifth of its budget) on every node; 50 ms costs a tenth of that and still catches any
    // stall long enough to matter to failover (hundreds of ms).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_PRECISION_MS });
  }
}
