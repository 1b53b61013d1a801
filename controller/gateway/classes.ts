// Which GatewayClasses this controller serves, and the status conditions Gateway API asks of their controller
// (apis/v1/gatewayclass_types.go: Accepted, SupportedVersion). Pure, so that every combination of class, CRD version
// and prior status is decided in unit tests; the reconciler (classReconciler.ts) only reads and writes.
import { PROVIDERS, type ProviderName } from "../../providers/registry.ts";

export const GATEWAY_GROUP = "gateway.networking.k8s.io";
/** The CRD whose bundle-version annotation says which Gateway API release the cluster has installed. */
export const GATEWAY_CLASS_CRD = `gatewayclasses.${GATEWAY_GROUP}`;
export const BUNDLE_VERSION_ANNOTATION = `${GATEWAY_GROUP}/bundle-version`;
/** The Gateway API releases whose CRDs Portico reads, as the SupportedVersion message names them. */
export const SUPPORTED_BUNDLES = "v1.5.x and v1.6.x";
const SUPPORTED_BUNDLE = /^v1\.[56]\.\d+$/;

/**
 * The spec.controllerName of the GatewayClasses a provider's controller serves: its own Service class's name, as its
 * descriptor declares it (a provider added to the registry serves its GatewayClasses with no change here).
 */
export function gatewayControllerName(provider: ProviderName): string {
  return PROVIDERS[provider].loadBalancerClass;
}

/** A metav1.Condition as GatewayClass status holds it. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface GatewayClass {
  metadata?: { name?: string; generation?: number; resourceVersion?: string };
  spec?: {
    controllerName?: string;
    parametersRef?: { group?: string; kind?: string; name?: string; namespace?: string } | null;
  };
  status?: { conditions?: Condition[] } & Record<string, unknown>;
}

export const ACCEPTED = "Accepted";
export const SUPPORTED_VERSION = "SupportedVersion";
export const INVALID_PARAMETERS = "InvalidParameters";
export const UNSUPPORTED_VERSION = "UnsupportedVersion";

/** Classes naming another controller are never touched. */
export function isOwnClass(gc: GatewayClass, controllerName: string): boolean {
  return gc.spec?.controllerName === controllerName;
}

/** A bundle version Portico reads: the spec requires SupportedVersion False for a missing or unknown one. */
export function isSupportedBundle(bundleVersion: string | undefined): boolean {
  return bundleVersion !== undefined && SUPPORTED_BUNDLE.test(bundleVersion);
}

type Decided = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

/** Accepted and SupportedVersion as they should read now, without times or generation. */
export function decideConditions(gc: GatewayClass, bundleVersion: string | undefined): Decided[] {
  const supported = isSupportedBundle(bundleVersion);
  const installed = bundleVersion
    ? `the installed Gateway API CRDs are ${bundleVersion}`
    : `the installed Gateway API CRDs carry no ${BUNDLE_VERSION_ANNOTATION} annotation (on CRD ${GATEWAY_CLASS_CRD})`;
  const versionFix = `${installed}, and Portico supports ${SUPPORTED_BUNDLES}: install the standard CRDs of Gateway API v1.6`;
  const version: Decided = supported
    ? {
        type: SUPPORTED_VERSION,
        status: "True",
        reason: SUPPORTED_VERSION,
        message: `Gateway API ${bundleVersion} is supported`,
      }
    : { type: SUPPORTED_VERSION, status: "False", reason: UNSUPPORTED_VERSION, message: versionFix };
  // The class's own mistake first: it is the one its author can fix, whatever the cluster's CRDs.
  const ref = gc.spec?.parametersRef;
  const accepted: Decided = ref
    ? {
        type: ACCEPTED,
        status: "False",
        reason: INVALID_PARAMETERS,
        message:
          `spec.parametersRef is set (${describeRef(ref)}), but Portico takes no parameters for a GatewayClass: ` +
          "remove spec.parametersRef from the GatewayClass",
      }
    : !supported
      ? { type: ACCEPTED, status: "False", reason: UNSUPPORTED_VERSION, message: versionFix }
      : {
          type: ACCEPTED,
          status: "True",
          reason: ACCEPTED,
          message: "Portico serves the Gateways of this class",
        };
  return [accepted, version];
}

function describeRef(ref: NonNullable<NonNullable<GatewayClass["spec"]>["parametersRef"]>): string {
  const kind = ref.group ? `${ref.kind ?? "?"}.${ref.group}` : (ref.kind ?? "?");
  return `${kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name ?? "?"}`;
}

/**
 * The conditions to write on one of this controller's classes, or undefined when its status already says so (or
 * the class is another controller's). Conditions of other types keep their place and content; ours are merged by
 * type; a condition's lastTransitionTime is kept while its status stays; one observed at a newer generation than
 * the object read is left alone, as the spec requires (the copy read is stale and another event follows).
 */
export function classConditions(
  gc: GatewayClass,
  controllerName: string,
  bundleVersion: string | undefined,
  now: Date,
): Condition[] | undefined {
  if (!isOwnClass(gc, controllerName)) return undefined;
  const generation = gc.metadata?.generation;
  const current = gc.status?.conditions ?? [];
  const next = [...current];
  let changed = false;
  for (const want of decideConditions(gc, bundleVersion)) {
    const at = next.findIndex((c) => c.type === want.type);
    const had = at >= 0 ? next[at] : undefined;
    if (
      had?.observedGeneration !== undefined &&
      generation !== undefined &&
      had.observedGeneration > generation
    )
      continue;
    const cond: Condition = {
      ...want,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime:
        had && had.status === want.status && had.lastTransitionTime ? had.lastTransitionTime : rfc3339(now),
    };
    if (had && same(had, cond)) continue;
    changed = true;
    if (at >= 0) next[at] = cond;
    else next.push(cond);
  }
  return changed ? next : undefined;
}

function same(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration &&
    a.lastTransitionTime === b.lastTransitionTime
  );
}

/** metav1.Time is RFC 3339 at second precision, as every other controller writes it. */
function rfc3339(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, "Z");
}
