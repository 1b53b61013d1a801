// Every provider Portico has, by name: the one place that knows them all. The controller and porticoctl build
// providers, read their settings and learn what to watch only through here and the provider interface
// (provider.ts, descriptor.ts); a provider's code, and its cloud's SDK, is loaded only when it is started.
import { AWS } from "./aws/descriptor.ts";
import { AZURE } from "./azure/descriptor.ts";
import type { CloudAccess } from "./descriptor.ts";
import { METAL } from "./metal/descriptor.ts";
import type { LoadBalancerProvider } from "./provider.ts";

export type { AwsSettings } from "./aws/descriptor.ts";
export type { AzureConfig } from "./azure/descriptor.ts";
export type { MetalSettings } from "./metal/descriptor.ts";

export const PROVIDERS = { aws: AWS, azure: AZURE, metal: METAL } as const;
export type ProviderName = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** The provider whose inspector reads Services of this class. */
function inspectorOf(cls: string | undefined) {
  return Object.values(PROVIDERS).find(
    (p) => cls !== undefined && (p.inspects as readonly string[]).includes(cls),
  );
}

/**
 * A provider for looking at the cloud of a class; porticoctl only ever reads through it (inspect, plan).
 * Undefined for a class no cloud serves, or when the provider needs more than it was given (`inspectionHint`).
 */
export async function inspectorFor(
  cls: string | undefined,
  clusterName: string,
  access: CloudAccess = {},
): Promise<LoadBalancerProvider | undefined> {
  const descriptor = inspectorOf(cls);
  return descriptor && "inspector" in descriptor ? descriptor.inspector(clusterName, access) : undefined;
}

/** How to get a class's cloud detail when porticoctl cannot read its cloud without being told more. */
export function inspectionHint(cls: string | undefined, access: CloudAccess = {}): string | undefined {
  const descriptor = inspectorOf(cls);
  return descriptor && "inspectionHint" in descriptor ? descriptor.inspectionHint(access) : undefined;
}
