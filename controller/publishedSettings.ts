// What the leading controller publishes about itself on its leader Lease, so that porticoctl reads the
// cluster name, class, node selector and cloud location the controller really runs with instead of asking the
// user for flags (and guessing wrong when they are left out). Secrets never go here: porticoctl reads the cloud
// with the user's own credentials.
import type { V1Lease } from "@kubernetes/client-node";
import { descriptorNamed } from "../providers/registry.ts";
import { descriptorOf, type ControllerConfig } from "./config.ts";
import { VERSION } from "./version.ts";

export const SETTINGS_ANNOTATION = "portico.io/controller-settings";

export interface PublishedSettings {
  /** The controller's own version, which `porticoctl version` sets beside its own. */
  version?: string;
  provider: ControllerConfig["provider"];
  loadBalancerClass: string;
  /** Classes served beside its own. */
  alsoServes?: string[];
  defaultForUnclassed: boolean;
  clusterName: string;
  /** The only namespace served, when the controller is confined to one. */
  namespace?: string;
  nodeSelector?: string;
  /**
   * What the provider publishes of its own settings (its descriptor's `publish`): the defaults and limits by which
   * porticoctl judges Services as the controller does, and where in the cloud it makes things.
   */
  settings?: unknown;
}

export function settingsOf(config: ControllerConfig): PublishedSettings {
  const published = descriptorOf(config).publish?.(config.settings);
  return {
    version: VERSION,
    provider: config.provider,
    loadBalancerClass: config.loadBalancerClass,
    ...(config.alsoServes ? { alsoServes: config.alsoServes } : {}),
    defaultForUnclassed: config.defaultForUnclassed,
    clusterName: config.clusterName,
    ...(config.namespace ? { namespace: config.namespace } : {}),
    ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
    ...(published !== undefined ? { settings: published } : {}),
  };
}

export function settingsAnnotation(config: ControllerConfig): Record<string, string> {
  return { [SETTINGS_ANNOTATION]: JSON.stringify(settingsOf(config)) };
}

/** The settings a Lease carries, or undefined when it carries none that can be read. */
export function readSettings(lease: V1Lease): PublishedSettings | undefined {
  const raw = lease.metadata?.annotations?.[SETTINGS_ANNOTATION];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<PublishedSettings>;
    if (
      typeof parsed.clusterName !== "string" ||
      typeof parsed.loadBalancerClass !== "string" ||
      !descriptorNamed(parsed.provider)
    )
      return undefined;
    return parsed as PublishedSettings;
  } catch {
    return undefined;
  }
}
