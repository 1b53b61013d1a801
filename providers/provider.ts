// The contract between Portico's provider-neutral controller and a cloud (or bare-metal) provider.
// The controller turns a Service into a LoadBalancerIntent; the provider makes the cloud match it.

/** Identifies a Service and, through its UID, the cloud resources Portico made for it. */
export interface ServiceRef {
  namespace: string;
  name: string;
  uid: string;
}

export type Protocol = "TCP" | "UDP" | "SCTP";

export interface PortIntent {
  /** The Service port's name ("" when the Service has a single unnamed port). */
  name: string;
  protocol: Protocol;
  /** The port the load balancer listens on. */
  port: number;
  /** Allocated by the apiserver; absent when `allocateLoadBalancerNodePorts: false`. */
  nodePort?: number;
}

/** A node that may receive traffic (already filtered for eligibility). */
export interface NodeTarget {
  name: string;
  providerID?: string;
  internalIP?: string;
  /** The node's IPv6 InternalIP when internalIP is IPv4 (dual-stack nodes): IPv6 frontends' backends. */
  internalIPv6?: string;
  zone?: string;
  /** The node's labels, for providers that place nodes by them (Azure's per-load-balancer node selectors). */
  labels?: Record<string, string>;
}

/** A pod endpoint from the Service's EndpointSlices. */
export interface EndpointTarget {
  ip: string;
  nodeName?: string;
  zone?: string;
  /** Resolved target port per Service port name (from the EndpointSlice's ports). */
  ports: Record<string, number>;
  /**
   * The pod behind a not-yet-ready endpoint that waits only for this Service's readiness gate: a target so that
   * the load balancer can check it; the controller opens the gate once the provider reports it healthy.
   */
  awaitingGate?: string;
  /** The pod behind a terminating endpoint that drains (LoadBalancerIntent.drainingEndpoints). */
  pod?: string;
}

/**
 * Everything a provider needs to know about one LoadBalancer Service, provider-neutral and validated.
 * Provider-specific settings stay in `annotations`, which each provider parses itself.
 */
export interface LoadBalancerIntent {
  service: ServiceRef;
  loadBalancerClass: string;
  annotations: Record<string, string>;
  /** Annotations accepted because Portico already behaves as they ask: told to the user once, changing nothing. */
  acceptedNoops?: string[];
  /**
   * Portico claimed the Service in this pass (its finalizer was not there before): nothing can exist in the cloud
   * for it yet, since the finalizer is written before anything is made. A provider may skip looking.
   */
  claimedNow?: true;
  ports: PortIntent[];
  externalTrafficPolicy: "Cluster" | "Local";
  /** Set by the apiserver for `externalTrafficPolicy: Local`. */
  healthCheckNodePort?: number;
  allocateNodePorts: boolean;
  /** Eligible nodes: Ready, not being deleted, not excluded, matching the target-node selectors. */
  nodes: NodeTarget[];
  /** Endpoints that should receive new connections (ready ones, or serving-terminating ones when none is ready). */
  endpoints: EndpointTarget[];
  /** Terminating endpoints that still serve: deregistered so they drain, never cut off abruptly. */
  /** Each names its pod (`pod`) where the EndpointSlice does. */
  drainingEndpoints: EndpointTarget[];
  /** Validated CIDRs allowed to reach the load balancer (empty: everyone). */
  sourceRanges: string[];
  /**
   * The field that gave them, for refusals to name: spec.loadBalancerSourceRanges, or the
   * service.beta.kubernetes.io/load-balancer-source-ranges annotation when the spec gives none. Absent: the spec.
   */
  sourceRangesField?: string;
  ipFamilies: ("IPv4" | "IPv6")[];
  ipFamilyPolicy: "SingleStack" | "PreferDualStack" | "RequireDualStack";
  /** `spec.sessionAffinity: ClientIP`: a client's connections should reach the same backend. */
  clientIPAffinity?: boolean;
  /** `spec.selector`: the pods the Service sends to (bare-metal Services sharing an address must agree on them). */
  selector?: Record<string, string>;
  /** `spec.loadBalancerIP` (deprecated by Kubernetes, still honoured where a provider can). */
  loadBalancerIP?: string;
  /** The Service's labels and its namespace's, for providers that select by them (IP pools). */
  serviceLabels: Record<string, string>;
  namespaceLabels: Record<string, string>;
}

export interface IngressPoint {
  hostname?: string;
  ip?: string;
  ipMode?: "VIP" | "Proxy";
}

/**
 * Whether traffic sent to the load balancer can reach a backend now, as far as the provider can tell: from the
 * targets and their health checks, or on bare metal from whether a node announces the address.
 */
export interface TrafficState {
  /** true: a backend answers behind every port; false: some port's traffic goes nowhere; undefined: not known yet. */
  flowing: boolean | undefined;
  /** CamelCase, for the condition and Events: e.g. TargetsHealthy, NoTargets, TargetsUnhealthy, HealthChecksPending. */
  reason: string;
  /** For people: what is wrong and what to do. */
  message: string;
  /**
   * Only the cluster can change this (no ready endpoint, no eligible node): nothing the cloud reports will, so
   * the controller does not look again on a timer; the watches bring the Service back when the cluster changes.
   */
  untilClusterChanges?: true;
}

/** An Event the provider asks for: Warning when the user should act or traffic suffers, Normal otherwise. */
export interface Notice {
  type: "Normal" | "Warning";
  /** CamelCase, e.g. ReplacingLoadBalancer. */
  reason: string;
  message: string;
}

export interface EnsureResult {
  ingress: IngressPoint[];
  /** Whether traffic can flow; absent when the provider cannot tell (the Serving condition is then not shown). */
  traffic?: TrafficState;
  /**
   * Annotations the provider keeps on the Service for others to read (e.g. the pool an address came from, for
   * the speakers); written when they differ, removed with the load balancer. Keys must be the provider's own.
   */
  recorded?: Record<string, string>;
  /** The changes made, one line each (empty when the cloud already matched). */
  changes: string[];
  /** Things worth telling the user as Events (e.g. a replacement forced by a change the cloud cannot make in place). */
  notices: Notice[];
  /**
   * Where the load balancer sends to pods, the endpoint addresses it reports healthy behind every port they
   * serve: the readiness gates of those pods open. Absent where it sends to nodes (or the provider cannot tell
   * a pod's health): pods waiting for a gate then have nothing to wait for.
   */
  healthyEndpoints?: string[];
  /**
   * Where the load balancer sends to pods and drains a removed one (its open connections go on for a while):
   * for how long, and the setting that says so. The controller warns when pods are given less time to stop.
   */
  podDrain?: PodDrain;
  /** Come back later even if nothing changes (e.g. to finish a replacement once the new load balancer is active). */
  requeueAfterMs?: number;
}

export interface PodDrain {
  seconds: number;
  /** The setting and how to change it, for the user (e.g. the target group attribute and its annotation). */
  setting: string;
}

/**
 * A Service whose security rules, as Portico last made them, differ from what the cloud holds now: someone outside
 * Portico revoked, added or changed one (a rule Portico wrote is never changed by Portico alone).
 */
export interface SecurityRuleDrift {
  service: ServiceRef;
  /** One line per difference, naming the rule and where it is (for the Service's Events and the log). */
  differences: string[];
  /** Restored by the check itself (rules Services share); false: restored by reconciling the Service. */
  restored: boolean;
}

/** A human-readable dry run: what `ensure` would do, without doing it. */
export interface PlanDescription {
  operations: string[];
}

/** One line of `porticoctl status`'s tree: a cloud resource, its state, and what hangs below it. */
export interface InspectNode {
  label: string;
  /** "ok", "warn" or "bad" colour the line on a terminal; absent: neutral. */
  health?: "ok" | "warn" | "bad";
  children?: InspectNode[];
}

export interface LoadBalancerProvider {
  /** e.g. "aws", "azure", "metal". */
  readonly name: string;
  /** Services compete for one pool of capacity (IP addresses): when one lets go, the others may proceed. */
  readonly capacityIsShared?: boolean;
  /**
   * `ensure` reports which pods the load balancer finds healthy (EnsureResult.healthyEndpoints) for Services whose
   * targets are pods: only then are pods given readiness gates (AWS: ELBv2's target health; Azure: each rule's
   * backend health).
   */
  readonly reportsPodHealth?: boolean;
  /** The annotation keys `ensure` may record on a Service (EnsureResult.recorded), removed when it lets go. */
  readonly recordedAnnotations?: readonly string[];
  /**
   * Make the cloud match the intent; idempotent, safe to repeat after a crash at any point. `background`: nothing
   * asked for this pass (the periodic resync), so its cloud calls may wait for those of changes users wait for.
   */
  ensure(intent: LoadBalancerIntent, context?: { background?: boolean }): Promise<EnsureResult>;
  /** What `ensure` would do now, computed by the same pure planning code, without changing anything. */
  plan(intent: LoadBalancerIntent): Promise<PlanDescription>;
  /** Remove everything made for the Service; a no-op when nothing is left. */
  delete(service: ServiceRef): Promise<void>;
  /** Services that own cloud resources in this cluster, found from ownership tags (for orphan collection). */
  ownedServices(): Promise<ServiceRef[]>;
  /**
   * Told, now and then, every Service in the controller's view that wants a load balancer (and, when just read,
   * those owning cloud resources): what Services share (AWS's backend rules) is narrowed to what they need once
   * each has been ensured, and what none uses goes.
   */
  settle?(inView: ServiceRef[], owning?: ServiceRef[]): Promise<void>;
  /**
   * Compares the security rules Portico made for the Services it has ensured (their own and those they share) with
   * what the cloud holds now, in a read or two for the whole cluster whatever the number of Services, and restores
   * what the Services share; the controller reconciles the other Services returned, which restores theirs. Security
   * rules decide who reaches a Service, so the controller runs this often (about once a minute), not only at the
   * periodic resync. Absent where the provider makes no security rules.
   */
  checkSecurityRules?(): Promise<SecurityRuleDrift[]>;
  /**
   * A leadership term begins: what the provider cached in an earlier term may be stale, another leader having
   * acted since (its caches may be trusted for minutes by passes users wait for), so it starts afresh, as after a
   * restart.
   */
  startTerm?(): void;
  /**
   * Where `ensure` would send the Service's traffic — the nodes' node ports (`instance`) or the pods (`ip`) — from
   * the provider's own settings code, so that tools report what the controller does; throws the ConfigurationError
   * `ensure` would refuse the Service with. Pure: no cloud call. Absent where traffic always enters through a node.
   */
  targetType?(intent: LoadBalancerIntent): "instance" | "ip";
  /** What exists in the cloud for the Service and how healthy it is, read-only (for `porticoctl status`). */
  inspect?(service: ServiceRef): Promise<InspectNode[]>;
}
