// Which of a Service's fields decided each of its Azure parts, for the refusals that must name one. A refusal
// names what the user can change: a field the Service has (an annotation it carries, a spec field), or, where
// nothing of the Service decided it, the controller's setting that did. A message naming an annotation the
// Service does not carry (a public Service told about azure-load-balancer-internal) sends its reader looking for
// something that is not there. Pure.
import { AZURE_ANNOTATION_KEYS } from "./catalog.ts";
import { PORTICO_ANNOTATIONS } from "../../annotationKeys/portico.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import type { IpFamily } from "../names.ts";
import type { AzureServiceSettings } from "./settings.ts";

/** Kubernetes' own key for source ranges, which the intent reads when spec.loadBalancerSourceRanges is empty. */
const SOURCE_RANGES_KEY = "service.beta.kubernetes.io/load-balancer-source-ranges";

export const annotationField = (key: string): string => `metadata.annotations[${key}]`;

/** A setting of the controller's azure.json, as a refusal names it when no field of the Service decided. */
export const configField = (setting: string): string => `${setting} (controller Azure config)`;

/** What decided the parts of one family's side that refusals about shared resources come back to. */
export interface ServiceFields {
  /**
   * What puts the Service's name in the shared load balancer's tags (no public IP Portico made for it records
   * it): the internal annotation, or the field naming the public IP it uses.
   */
  record?: string;
  /** portico.io/target-type, when the Service carries it; otherwise the default follows its node ports. */
  targetType?: string;
  /** The annotation that turned floating IP on or off, when one did; otherwise the cluster's default decides. */
  floatingIP?: string;
  /** Where the addresses its security rules admit are written, when it lists any. */
  sources?: string;
}

export function serviceFields(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  family: IpFamily,
  recorded: boolean,
): ServiceFields {
  const out: ServiceFields = {};
  const record = recorded ? recordField(settings, family) : undefined;
  if (record) out.record = record;
  if (settings.targetType) out.targetType = annotationField(PORTICO_ANNOTATIONS.targetType);
  const floating = floatingIPField(intent);
  if (floating) out.floatingIP = floating;
  if (settings.allowedIpRanges.length) out.sources = annotationField(AZURE_ANNOTATION_KEYS.allowedIpRanges);
  else if (intent.sourceRanges.length) out.sources = sourceRangesField(intent);
  return out;
}

/** An internal Service's annotation, or the field that named the user's (or another Service's) public IP. */
function recordField(settings: AzureServiceSettings, family: IpFamily): string | undefined {
  if (settings.internal) return annotationField(AZURE_ANNOTATION_KEYS.internal);
  if (settings.requestedAddress) return settings.requestedAddress.field;
  if (settings.publicIpName)
    return annotationField(
      family === "IPv6" ? AZURE_ANNOTATION_KEYS.pipNameIpv6 : AZURE_ANNOTATION_KEYS.pipName,
    );
  return undefined;
}

/** The annotation that says floating IP on or off (Portico's own first, as the settings read them). */
export function floatingIPField(intent: LoadBalancerIntent): string | undefined {
  const key = [PORTICO_ANNOTATIONS.floatingIP, AZURE_ANNOTATION_KEYS.disableFloatingIP].find((k) =>
    intent.annotations[k]?.trim(),
  );
  return key && annotationField(key);
}

/**
 * Where the intent's source ranges come from: spec.loadBalancerSourceRanges, or, when that is empty, Kubernetes'
 * annotation (as the controller reads them).
 */
export function sourceRangesField(intent: LoadBalancerIntent): string {
  const written = (intent.annotations[SOURCE_RANGES_KEY] ?? "")
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
  return written.length && written.join(",") === intent.sourceRanges.join(",")
    ? annotationField(SOURCE_RANGES_KEY)
    : "spec.loadBalancerSourceRanges";
}
