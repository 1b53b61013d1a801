// What each provider declares to the programs that run it (providers/registry.ts holds one per provider): its
// class, its command-line settings, what of the cluster it needs watched, how it starts inside the controller
// (with whatever it writes besides Service status), and how porticoctl reads its cloud. A descriptor module loads
// no cloud SDK: the provider's own code is imported only when it is started or asked to inspect.
import type { CoordinationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../shared/log.ts";
import type { ClassConfig } from "./classes.ts";
import type { ClusterView } from "./cluster.ts";
import type { LoadBalancerProvider } from "./provider.ts";
import type { PoolCounts } from "../shared/allocationTypes.ts";
import type { ProviderAnnotations } from "./annotationKeys/types.ts";

/** The flags a provider adds to the controller's command line, as node:util parseArgs takes them. */
export type FlagTable = Record<string, { type: "string" | "boolean" }>;
export type FlagValues = Record<string, string | boolean | undefined>;

/** What the command line says that every provider's settings may depend on. */
export interface CommonSettings {
  provider: string;
  clusterName: string;
  /** --load-balancer-class, when given. */
  loadBalancerClass?: string;
}

/** The parts of the cluster the controller's cache watches for a provider, beyond Services, Nodes and slices. */
export interface ClusterNeeds {
  /** IPAddressPools (and Namespaces, whose labels select pools). */
  pools?: boolean;
  /** Namespaces, whose labels select Services. */
  namespaces?: boolean;
  /** MetalLB's IPAddressPools in this namespace, when installed; `required`: warned about when not. */
  metallb?: { namespace: string; required: boolean };
}

/** What the controller gives a provider it starts. */
export interface ProviderContext {
  clusterName: string;
  classes: ClassConfig;
  cluster: ClusterView & Required<Pick<ClusterView, "service">>;
  kc: KubeConfig;
  /** The apiserver, for providers that read or write more than the cache holds. */
  kube?: { core: CoreV1Api; coordination: CoordinationV1Api };
  log: Logger;
  /** The only namespace the controller serves, when confined to one. */
  namespace?: string;
  /** Each cloud call: the controller's metrics count them. */
  onCloudCall(operation: string, outcome: "ok" | "error", code: string | undefined, seconds: number): void;
  /**
   * Each status of a cluster object other than a Service (an IPAddressPool's) compared with what it should say:
   * "written" when it needed a write, "unchanged" when it did not.
   */
  onStatusCheck?: (kind: string, name: string, outcome: "written" | "unchanged") => void;
}

/** A provider started inside the controller, with what it keeps current besides the Services' status. */
export interface StartedProvider {
  provider: LoadBalancerProvider;
  /** Called after each reconcile: what depends on the allocations (pool status) is brought up to date. */
  afterReconcile?: () => void;
  /** The address pools' counts, for the metrics (bare metal). */
  poolCounts?: () => readonly PoolCounts[];
  stop?: () => void;
}

/**
 * What porticoctl knows of a provider's cloud beyond the standard credential chains, each part as the provider
 * itself wrote it: what the user gave through the provider's porticoctl flags (`tool.read`), and what the serving
 * controller published of its settings on its Lease (`publish`).
 */
export interface CloudAccess {
  readonly given?: unknown;
  readonly published?: unknown;
}

/** What porticoctl plan and migrate tell a provider's planner. */
export interface PlannerContext {
  readonly purpose: "plan" | "migrate";
  readonly clusterName: string;
  readonly access: CloudAccess;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;
  /** The classes the controller planned for serves (whether it takes unclassed Services too). */
  readonly classes: ClassConfig;
}

/** porticoctl's side of a provider: the flags it adds to porticoctl and what they give the provider. */
export interface ToolSide {
  readonly flags: FlagTable;
  /** The flags' lines in porticoctl's help, laid out as the rest (two spaces in, help after a gap). */
  readonly usage: string;
  /** What the flags give the provider's inspector and planner (CloudAccess.given); throws UsageError naming one. */
  read(values: FlagValues, env: NodeJS.ProcessEnv): unknown;
}

export interface ProviderDescriptor<Settings> {
  readonly name: string;
  /** The class a controller of this provider serves unless told another. */
  readonly loadBalancerClass: string;
  /** Classes whose Services this provider's inspector reads (its own, and classes it takes over). */
  readonly inspects: readonly string[];
  /** Whether names in its cloud depend on the cluster name (porticoctl needs one to plan). */
  readonly namesByCluster: boolean;
  /** The annotations it reads (its catalog, providers/<name>/annotations/catalog.ts). */
  readonly annotations: ProviderAnnotations;
  readonly flags: FlagTable;
  /** The flags' lines in the controller's help, laid out as the rest (two spaces in, help after a gap). */
  readonly usage: string;
  /** The provider's settings from its flags and the environment; throws UsageError naming the flag. */
  settings(values: FlagValues, env: NodeJS.ProcessEnv, common: CommonSettings): Settings;
  /** Classes served beside the controller's own with these settings (a class taken over). */
  alsoServes?(settings: Settings): readonly string[];
  /** What the leading controller publishes of its settings for porticoctl (never a secret). */
  publish?(settings: Settings): unknown;
  /** What the controller's cache must watch for it. */
  needs(settings: Settings): ClusterNeeds;
  start(settings: Settings, context: ProviderContext): Promise<StartedProvider>;
  /**
   * A provider for looking at the cloud, for porticoctl (inspect, plan); undefined when it cannot look without
   * more than it was given (`hint` says what).
   */
  inspector?(clusterName: string, access: CloudAccess): Promise<LoadBalancerProvider | undefined>;
  /** How to get this provider's cloud detail when porticoctl cannot read it without being told more. */
  inspectionHint?(access: CloudAccess): string | undefined;
  /**
   * A provider that plans and writes nothing, for porticoctl plan and migrate, where the inspector is not enough
   * (a snapshot of the cluster, a take-over previewed); default: the inspector.
   */
  planner?(context: PlannerContext): Promise<LoadBalancerProvider | undefined>;
  /** migrate: lines about a Service's objects that are the provider's to mention (another controller's left-overs). */
  migrationNotes?(context: PlannerContext, namespace: string, name: string): Promise<string[]>;
  /** What an error reading the cloud calls for: the fix when access is denied, and otherwise. */
  cloudErrorFix?(denied: boolean): string;
  /** porticoctl's flags for this provider. */
  readonly tool?: ToolSide;
}
