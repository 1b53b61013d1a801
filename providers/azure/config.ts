// The Azure provider's configuration, read from a cloud-config JSON file in the format cloud-provider-azure uses
// (azure.json on AKS nodes), so operators can hand Portico the file they already have. Environment variables
// override single keys. Unknown keys are ignored, as cloud-provider-azure ignores Portico's.
import { AZURE_LIMITS, type AzureLimits } from "./limits/limitValues.ts";
import {
  parseLoadBalancerConfigurations,
  type LoadBalancerConfiguration,
} from "./placement/lbConfigurations.ts";
import type { RateLimiterOptions } from "../rateLimit.ts";
import { rateLimiterOptionsFromEnv } from "./arm/rateLimit.ts";

export interface AzureConfig {
  subscriptionId: string;
  tenantId?: string;
  /** The cluster's resource group: default for load balancers, public IPs, the VNet and the NSG. */
  resourceGroup: string;
  location: string;
  vnetName: string;
  vnetResourceGroup?: string;
  /** Default subnet of internal frontends (annotation azure-load-balancer-internal-subnet overrides). */
  subnetName: string;
  /** The NSG that carries the Services' allow rules; without it source ranges cannot be enforced. */
  securityGroupName?: string;
  securityGroupResourceGroup?: string;
  loadBalancerResourceGroup?: string;
  /** The shared public load balancer's name (the internal one adds `-internal`); default: the cluster name. */
  loadBalancerName?: string;
  /** One load balancer per Service instead of the shared cluster load balancers. */
  loadBalancerPerService?: boolean;
  /**
   * Several shared Standard load balancers instead of one, as cloud-provider-azure's option of this name:
   * Services are placed by selectors and nodes by primary pool (placement/).
   */
  multipleStandardLoadBalancerConfigurations?: LoadBalancerConfiguration[];
  /**
   * Floating IP for instance-target Services that ask for neither floating IP nor its absence. Default false
   * (Portico's); true is cloud-provider-azure's default, for clusters moving over that want their Services'
   * rules unchanged (desired/desired.ts says why Portico's default differs).
   */
  floatingIPDefault?: boolean;
  /**
   * The --cluster-name cloud-provider-azure ran with (default `kubernetes`, AKS's): a Service's public IP it made,
   * tagged with this cluster and the Service, is taken over with its address instead of replaced
   * (adoption/adoption.ts).
   */
  cloudProviderAzureClusterName?: string;
  /** ARM endpoint; default https://management.azure.com (the emulator exports AZURE_RESOURCE_MANAGER_ENDPOINT). */
  resourceManagerEndpoint?: string;
  /** Microsoft Entra authority; default from AZURE_AUTHORITY_HOST, else the public cloud. */
  activeDirectoryAuthorityHost?: string;
  /** Service principal from the file (cloud-provider-azure's aadClientId/aadClientSecret). */
  aadClientId?: string;
  aadClientSecret?: string;
  /** Managed identity (cloud-provider-azure's useManagedIdentityExtension/userAssignedIdentityID). */
  useManagedIdentityExtension?: boolean;
  userAssignedIdentityID?: string;
  /** How often long-running operations are polled when ARM gives no Retry-After (ms). */
  pollIntervalMs?: number;
  /** Retries of throttled or failed requests inside one ARM call, before the reconcile is retried later. */
  maxRetries?: number;
  /**
   * The client-side rate limiter that keeps Portico under ARM's and Microsoft.Network's request limits
   * (arm/rateLimit.ts): on by default; `false` turns it off; `{ "share": 0.5 }` starts it at half the
   * documented figures (it learns the rest of the subscription's use from throttles).
   * PORTICO_AZURE_RATE_LIMIT=off and PORTICO_AZURE_RATE_SHARE override the file.
   */
  rateLimit?: RateLimiterOptions | false;
  /**
   * Azure's limits a Service is checked against before anything is written for it; unset ones are the values
   * Azure documents (limits/limits.ts). Set where ARM holds the subscription to other ones (tests: the
   * emulator's).
   */
  limits?: Partial<AzureLimits>;
}

/**
 * Every key of the file Portico reads, with its type and meaning: the parser reads the plain string, boolean and
 * integer keys from here, and docs/configuration.md lists them from here, so the two cannot part.
 */
export const AZURE_KEYS = {
  subscriptionId: { type: "string", required: true, meaning: "The subscription of the cluster's resources." },
  tenantId: { type: "string", meaning: "The Microsoft Entra tenant; needed with a client secret." },
  resourceGroup: {
    type: "string",
    required: true,
    meaning: "The cluster's resource group: default for load balancers, public IPs, the VNet and the NSG.",
  },
  location: { type: "string", required: true, meaning: "The Azure region, e.g. `westeurope`." },
  vnetName: { type: "string", required: true, meaning: "The cluster's virtual network." },
  vnetResourceGroup: { type: "string", meaning: "The VNet's resource group; default `resourceGroup`." },
  subnetName: {
    type: "string",
    required: true,
    meaning:
      "Default subnet of internal frontends (the annotation azure-load-balancer-internal-subnet overrides it).",
  },
  securityGroupName: {
    type: "string",
    meaning: "The NSG that carries the Services' allow rules; without it source ranges cannot be enforced.",
  },
  securityGroupResourceGroup: {
    type: "string",
    meaning: "The NSG's resource group; default `resourceGroup`.",
  },
  loadBalancerResourceGroup: {
    type: "string",
    meaning: "The load balancers' resource group; default `resourceGroup`.",
  },
  loadBalancerName: {
    type: "string",
    meaning:
      "The shared public load balancer's name (the internal one adds `-internal`); default the cluster name.",
  },
  cloudProviderAzureClusterName: {
    type: "string",
    meaning:
      "The --cluster-name cloud-provider-azure ran with (default `kubernetes`, AKS's): a Service's public IP it " +
      "made is taken over with its address instead of replaced.",
  },
  resourceManagerEndpoint: {
    type: "string",
    meaning: "The ARM endpoint; default https://management.azure.com.",
  },
  activeDirectoryAuthorityHost: {
    type: "string",
    meaning: "The Microsoft Entra authority; default AZURE_AUTHORITY_HOST, else the public cloud's.",
  },
  aadClientId: { type: "string", meaning: "A service principal's client ID." },
  aadClientSecret: {
    type: "string",
    meaning: "That service principal's secret (needs aadClientId and tenantId).",
  },
  userAssignedIdentityID: {
    type: "string",
    meaning: "The client ID of the user-assigned managed identity to use.",
  },
  loadBalancerPerService: {
    type: "boolean",
    meaning: "One load balancer per Service instead of the shared cluster load balancers.",
  },
  useManagedIdentityExtension: { type: "boolean", meaning: "Sign in with the node's managed identity." },
  floatingIPDefault: {
    type: "boolean",
    meaning:
      "Floating IP for instance-target Services that ask for neither floating IP nor its absence; default false " +
      "(true is cloud-provider-azure's default, for clusters that want their Services' rules unchanged).",
  },
  pollIntervalMs: {
    type: "integer",
    meaning: "How often long-running operations are polled when ARM gives no Retry-After (ms).",
  },
  maxRetries: {
    type: "integer",
    meaning:
      "Retries of throttled or failed requests inside one ARM call, before the reconcile is retried later.",
  },
  multipleStandardLoadBalancerConfigurations: {
    type: "array",
    meaning:
      "Several shared Standard load balancers instead of one, as cloud-provider-azure's option of this name: " +
      "Services are placed by selectors and nodes by primary pool. Not with loadBalancerPerService.",
  },
  rateLimit: {
    type: "boolean or object",
    meaning:
      'The client-side rate limiter under ARM\'s request limits: on by default; `false` turns it off; `{ "share": ' +
      "0.5 }` starts it at half the documented figures. PORTICO_AZURE_RATE_LIMIT and PORTICO_AZURE_RATE_SHARE " +
      "override it.",
  },
  limits: {
    type: "object",
    meaning:
      "Azure's limits a Service is checked against before anything is written for it, by name (0: not checked); " +
      "unset ones are the values Azure documents.",
  },
  loadBalancerSku: {
    type: "string",
    parsedApart: true,
    meaning: "Only `Standard` (any case) is accepted: Portico makes Standard load balancers only.",
  },
} as const satisfies Record<
  string,
  { type: string; meaning: string; required?: boolean; parsedApart?: boolean }
>;

type AzureKey = keyof typeof AZURE_KEYS;
type KeyOfType<T extends string> = {
  [K in AzureKey]: (typeof AZURE_KEYS)[K] extends { type: T; parsedApart?: never } ? K : never;
}[AzureKey];

function keysOfType<T extends string>(type: T): KeyOfType<T>[] {
  return (Object.keys(AZURE_KEYS) as AzureKey[]).filter(
    (k) => AZURE_KEYS[k].type === type && !("parsedApart" in AZURE_KEYS[k]),
  ) as KeyOfType<T>[];
}

const STRING_KEYS = keysOfType("string");
const REQUIRED_KEYS = (Object.keys(AZURE_KEYS) as AzureKey[]).filter((k) => "required" in AZURE_KEYS[k]);

/** Environment variables that override a key of the file. */
export const AZURE_ENV_OVERRIDES: Record<string, KeyOfType<"string">> = {
  AZURE_SUBSCRIPTION_ID: "subscriptionId",
  AZURE_TENANT_ID: "tenantId",
  AZURE_RESOURCE_MANAGER_ENDPOINT: "resourceManagerEndpoint",
  AZURE_AUTHORITY_HOST: "activeDirectoryAuthorityHost",
  PORTICO_AZURE_RESOURCE_GROUP: "resourceGroup",
  PORTICO_AZURE_LOCATION: "location",
  PORTICO_AZURE_VNET_NAME: "vnetName",
  PORTICO_AZURE_SUBNET_NAME: "subnetName",
  PORTICO_AZURE_SECURITY_GROUP_NAME: "securityGroupName",
};

export class AzureConfigError extends Error {
  override name = "AzureConfigError";
}

/**
 * The configuration from a parsed cloud-config file (`{}` when there is none) and the environment. Throws
 * AzureConfigError naming the missing or wrong key.
 */
export function parseAzureConfig(file: unknown, env: NodeJS.ProcessEnv = {}): AzureConfig {
  if (typeof file !== "object" || file === null || Array.isArray(file))
    throw new AzureConfigError("the Azure config must be a JSON object (cloud-provider-azure's azure.json)");
  const raw = file as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of STRING_KEYS) {
    const value = raw[key];
    if (value === undefined || value === "") continue;
    if (typeof value !== "string") throw new AzureConfigError(`Azure config "${key}" must be a string`);
    out[key] = value;
  }
  for (const [variable, key] of Object.entries(AZURE_ENV_OVERRIDES)) {
    const value = env[variable]?.trim();
    if (value) out[key] = value;
  }
  for (const key of keysOfType("boolean")) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] !== "boolean")
      throw new AzureConfigError(`Azure config "${key}" must be true or false`);
    out[key] = raw[key];
  }
  for (const key of keysOfType("integer")) {
    if (raw[key] === undefined) continue;
    const n = raw[key];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0)
      throw new AzureConfigError(`Azure config "${key}" must be a whole number of at least 0`);
    out[key] = n;
  }
  if (raw.limits !== undefined) out.limits = parseLimits(raw.limits);
  const rateLimit = parseRateLimit(raw.rateLimit, env);
  if (rateLimit !== undefined) out.rateLimit = rateLimit;
  const multiple = raw.multipleStandardLoadBalancerConfigurations;
  if (multiple !== undefined && multiple !== null) {
    const { configurations, problems } = parseLoadBalancerConfigurations(multiple);
    if (problems.length) throw new AzureConfigError(`Azure config ${problems.join("; ")}`);
    if (configurations.length && out.loadBalancerPerService)
      throw new AzureConfigError(
        'Azure config "multipleStandardLoadBalancerConfigurations" spreads Services over shared load balancers, ' +
          'and "loadBalancerPerService" gives each its own: set one of them',
      );
    if (configurations.length) out.multipleStandardLoadBalancerConfigurations = configurations;
  }
  const sku = raw.loadBalancerSku;
  if (sku !== undefined && (typeof sku !== "string" || sku.toLowerCase() !== "standard"))
    throw new AzureConfigError(
      `Azure config "loadBalancerSku" is ${JSON.stringify(sku)}: Portico makes Standard load balancers only`,
    );
  for (const key of REQUIRED_KEYS) {
    if (!out[key])
      throw new AzureConfigError(
        `Azure config "${key}" is required` + (key === "subscriptionId" ? " (or AZURE_SUBSCRIPTION_ID)" : ""),
      );
  }
  if (out.aadClientSecret && !out.aadClientId)
    throw new AzureConfigError('Azure config "aadClientSecret" needs "aadClientId" (and "tenantId")');
  if (out.aadClientId && out.aadClientSecret && !out.tenantId)
    throw new AzureConfigError('Azure config "aadClientId" with a secret needs "tenantId"');
  out.location = String(out.location).toLowerCase().replace(/\s+/g, "");
  return out as unknown as AzureConfig;
}

/** `"limits": { "securityRulesPerGroup": 500, ... }`: names of AZURE_LIMITS, whole numbers (0: not checked). */
function parseLimits(raw: unknown): Partial<AzureLimits> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new AzureConfigError('Azure config "limits" must be an object of limit names and numbers');
  const out: Partial<AzureLimits> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(key in AZURE_LIMITS))
      throw new AzureConfigError(
        `Azure config "limits.${key}" is not a limit Portico checks; known: ${Object.keys(AZURE_LIMITS).join(", ")}`,
      );
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
      throw new AzureConfigError(`Azure config "limits.${key}" must be a whole number of at least 0`);
    out[key as keyof AzureLimits] = value;
  }
  return out;
}

/** `"rateLimit": false | true | { "share": 0.5 }`, the environment's PORTICO_AZURE_RATE_* over it. */
function parseRateLimit(raw: unknown, env: NodeJS.ProcessEnv): RateLimiterOptions | false | undefined {
  if (env.PORTICO_AZURE_RATE_LIMIT?.trim() || env.PORTICO_AZURE_RATE_SHARE?.trim()) {
    try {
      return rateLimiterOptionsFromEnv(env) ?? false;
    } catch (err) {
      throw new AzureConfigError((err as Error).message);
    }
  }
  if (raw === undefined || raw === true) return undefined;
  if (raw === false) return false;
  const bad = () =>
    new AzureConfigError(
      'Azure config "rateLimit" must be true, false or { "share": a number above 0 and at most 1 }',
    );
  if (typeof raw !== "object" || raw === null || Object.keys(raw).some((k) => k !== "share")) throw bad();
  const { share } = raw as { share?: unknown };
  if (share !== undefined && (typeof share !== "number" || !(share > 0 && share <= 1))) throw bad();
  return share === undefined ? {} : { share };
}

/** Resource groups, each defaulting to the cluster's. */
export function resourceGroups(config: AzureConfig) {
  return {
    loadBalancers: config.loadBalancerResourceGroup ?? config.resourceGroup,
    publicIps: config.resourceGroup,
    vnet: config.vnetResourceGroup ?? config.resourceGroup,
    securityGroup: config.securityGroupResourceGroup ?? config.resourceGroup,
  };
}
