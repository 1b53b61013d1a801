// What the leading controller publishes about itself on its leader Lease, so that porticoctl reads the
// cluster name, class, node selector and cloud location the controller really runs with instead of asking the
// user for flags (and guessing wrong when they are left out). Secrets never go here: porticoctl reads the cloud
// with the user's own credentials.
import type { V1Lease } from "@kubernetes/client-node";
import type { AzureConfig } from "../providers/registry.ts";
import type { ControllerConfig } from "./config.ts";
import { VERSION } from "./version.ts";

export const SETTINGS_ANNOTATION = "portico.io/controller-settings";

const AZURE_PUBLIC_KEYS = [
  "subscriptionId",
  "tenantId",
  "resourceGroup",
  "location",
  "vnetName",
  "vnetResourceGroup",
  "subnetName",
  "securityGroupName",
  "securityGroupResourceGroup",
  "loadBalancerResourceGroup",
  "loadBalancerName",
  "loadBalancerPerService",
  "floatingIPDefault",
  "resourceManagerEndpoint",
  "activeDirectoryAuthorityHost",
  "limits",
] as const satisfies readonly (keyof AzureConfig)[];

export type PublishedAzure = Pick<AzureConfig, (typeof AZURE_PUBLIC_KEYS)[number]>;

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
  awsRegion?: string;
  /** The scheme of NLBs whose Service names none: tools judge such Services as the controller does. */
  awsDefaultScheme?: "internal" | "internet-facing";
  /** --aws-rules-per-security-group: tools refuse the Services the controller refuses for their rule count. */
  awsRulesPerSecurityGroup?: number;
  azure?: PublishedAzure;
}

export function settingsOf(config: ControllerConfig): PublishedSettings {
  const azure = config.azure;
  return {
    version: VERSION,
    provider: config.provider,
    loadBalancerClass: config.loadBalancerClass,
    ...(config.alsoServes ? { alsoServes: config.alsoServes } : {}),
    defaultForUnclassed: config.defaultForUnclassed,
    clusterName: config.clusterName,
    ...(config.namespace ? { namespace: config.namespace } : {}),
    ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
    ...(config.aws.region ? { awsRegion: config.aws.region } : {}),
    ...(config.provider === "aws"
      ? {
          awsDefaultScheme: config.aws.defaultScheme,
          ...(config.aws.rulesPerSecurityGroup
            ? { awsRulesPerSecurityGroup: config.aws.rulesPerSecurityGroup }
            : {}),
        }
      : {}),
    ...(azure
      ? {
          azure: Object.fromEntries(
            AZURE_PUBLIC_KEYS.filter((k) => azure[k] !== undefined).map((k) => [k, azure[k]]),
          ) as PublishedAzure,
        }
      : {}),
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
      !["aws", "azure", "metal"].includes(parsed.provider ?? "")
    )
      return undefined;
    return parsed as PublishedSettings;
  } catch {
    return undefined;
  }
}
