import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { NetworkManagementClient, type PublicIPAddress } from "@azure/arm-network";
import { DefaultAzureCredential } from "@azure/identity";
import type { AzureConfig } from "../../providers/azure/config.ts";
import { AZURE_LOAD_BALANCER_CLASS } from "../../providers/azure/provider.ts";
import { startAzureEmulator, type EmulatorConfig, type FaultRule } from "../emulators/azure/index.ts";
import type { LoggedRequest } from "../emulators/azure/requestLog.ts";
import type { LimitCount, ThrottlingOptions } from "../emulators/azure/throttling.ts";
import { EnvironmentError } from "./errors.ts";

export const AZURE_CLASS = AZURE_LOAD_BALANCER_CLASS;

/** What a worker needs to reach its emulator: passed from the global setup, which runs the emulators. */
export interface AzureEndpoint {
  url: string;
  caCertPath: string;
  subscriptionId: string;
  /** AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_AUTHORITY_HOST, AZURE_SUBSCRIPTION_ID, ... */
  environment: Record<string, string>;
}

/** One emulator per worker, in the process that runs the global setup; `stop` ends them all. */
export async function startAzureEmulators(
  count: number,
  dir: string,
): Promise<{ endpoints: AzureEndpoint[]; stop(): Promise<void> }> {
  const emulators = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const own = join(dir, `azure-${i + 1}`);
      await mkdir(own, { recursive: true });
      return startAzureEmulator({ dir: own });
    }),
  );
  return {
    endpoints: emulators.map((e) => ({
      url: e.url,
      caCertPath: e.caCertPath,
      subscriptionId: e.subscriptionId,
      environment: e.environment,
    })),
    stop: async () => {
      await Promise.all(emulators.map((e) => e.stop()));
    },
  };
}

/** The cluster's Azure network every test starts with (see TestAzure.fresh). */
export const AZURE_WORLD = {
  resourceGroup: "portico-test",
  location: "eastus",
  vnetName: "cluster-vnet",
  vnetPrefix: "10.0.0.0/16",
  /** Nodes live here; the default subnet of internal frontends. */
  subnetName: "nodes",
  subnetPrefix: "10.0.1.0/24",
  /** A second subnet for internal frontends named by annotation. */
  internalSubnetName: "frontends",
  internalSubnetPrefix: "10.0.2.0/24",
  /** Pod addresses (Azure CNI): in the VNet, so pods can be backends. */
  podSubnetName: "pods",
  podSubnetPrefix: "10.0.64.0/18",
  /** The virtual network and its subnets are dual-stack, as AKS makes them for dual-stack clusters. */
  vnetPrefixV6: "fd00:10::/48",
  subnetPrefixV6: "fd00:10:0:1::/64",
  internalSubnetPrefixV6: "fd00:10:0:2::/64",
  podSubnetPrefixV6: "fd00:10:0:40::/64",
  securityGroupName: "cluster-nsg",
} as const;

export type ThrottlingSettings = Omit<ThrottlingOptions, "now">;

export interface ThrottlingState {
  enabled: boolean;
  limits?: Record<string, LimitCount>;
  throttled?: number;
  floor?: { seconds: number; limit?: string };
}

/** One credential per emulator (its authority host): a test that starts its own emulator gets its own tokens. */
const credentials = new Map<string, DefaultAzureCredential>();

/**
 * The controller's Azure configuration for the world TestAzure seeds on this worker's emulator (found, as the
 * controller would find it, through AZURE_SUBSCRIPTION_ID and AZURE_RESOURCE_MANAGER_ENDPOINT).
 */
export function azureTestConfig(overrides: Partial<AzureConfig> = {}): AzureConfig {
  const url = process.env.AZURE_RESOURCE_MANAGER_ENDPOINT;
  const subscriptionId = process.env.AZURE_SUBSCRIPTION_ID;
  if (!url || !subscriptionId)
    throw new EnvironmentError("no Azure emulator for this worker: the global setup did not start one");
  return {
    subscriptionId,
    resourceGroup: AZURE_WORLD.resourceGroup,
    location: AZURE_WORLD.location,
    vnetName: AZURE_WORLD.vnetName,
    subnetName: AZURE_WORLD.subnetName,
    securityGroupName: AZURE_WORLD.securityGroupName,
    resourceManagerEndpoint: url,
    activeDirectoryAuthorityHost: url,
    // Long-running operations are polled quickly when ARM sends no Retry-After.
    pollIntervalMs: 20,
    maxRetries: 2,
    ...overrides,
  };
}

/**
 * A test's Azure subscription: the real @azure/arm-network client pointed at this worker's emulator, which is
 * emptied before the test and seeded with the cluster's resource group, virtual network and security group.
 */
export class TestAzure {
  readonly url: string;
  readonly subscriptionId: string;
  readonly network: NetworkManagementClient;
  readonly resourceGroup = AZURE_WORLD.resourceGroup;
  private readonly credential: DefaultAzureCredential;

  private constructor() {
    const url = process.env.AZURE_RESOURCE_MANAGER_ENDPOINT;
    const subscriptionId = process.env.AZURE_SUBSCRIPTION_ID;
    if (!url || !subscriptionId)
      throw new EnvironmentError("no Azure emulator for this worker: the global setup did not start one");
    this.url = url;
    this.subscriptionId = subscriptionId;
    const authority = process.env.AZURE_AUTHORITY_HOST ?? url;
    let credential = credentials.get(authority);
    if (!credential) {
      credential = new DefaultAzureCredential({ disableInstanceDiscovery: true });
      credentials.set(authority, credential);
    }
    this.credential = credential;
    this.network = new NetworkManagementClient(credential, subscriptionId, { endpoint: url });
  }

  static async fresh(): Promise<TestAzure> {
    const azure = new TestAzure();
    await azure.admin("POST", "reset");
    await azure.seed();
    await azure.admin("DELETE", "requests");
    return azure;
  }

  /** The controller's Azure configuration for this world, with `overrides`. */
  config(overrides: Partial<AzureConfig> = {}): AzureConfig {
    return azureTestConfig(overrides);
  }

  /** Requests the emulator served since the test began (or since clearRequests), by operation. */
  async requestCounts(): Promise<Record<string, number>> {
    return ((await this.admin("GET", "requests")) as { counts: Record<string, number> }).counts;
  }

  /** The requests themselves, in the order served. */
  async requests(): Promise<LoggedRequest[]> {
    return ((await this.admin("GET", "requests")) as { log: [] }).log;
  }

  async clearRequests(): Promise<void> {
    await this.admin("DELETE", "requests");
  }

  async configure(config: Partial<EmulatorConfig>): Promise<void> {
    await this.admin("POST", "config", config);
  }

  async addFault(rule: FaultRule): Promise<void> {
    await this.admin("POST", "faults", rule);
  }

  /** Replaces every fault rule with `rules`, drawing rate-based faults from a generator seeded with `seed`. */
  async setFaults(seed: number, rules: FaultRule[]): Promise<void> {
    await this.admin("POST", "faults", { seed, faults: rules });
  }

  /** The fault rules in force, each with how many faults it has injected so far. */
  async faults(): Promise<(FaultRule & { injected: number })[]> {
    return ((await this.admin("GET", "faults")) as { faults: [] }).faults;
  }

  async clearFaults(): Promise<void> {
    await this.admin("DELETE", "faults");
  }

  /**
   * Switches on ARM's request throttling (test/emulators/azure/throttling.ts) with fresh buckets and windows:
   * { reserve?, scale?, overrides? }.
   */
  async setThrottling(settings: ThrottlingSettings): Promise<void> {
    await this.admin("POST", "throttling", settings);
  }

  /** The throttling's counts per limit, requests throttled, and floor (the least time the admitted ones need). */
  async throttling(): Promise<ThrottlingState> {
    return (await this.admin("GET", "throttling")) as ThrottlingState;
  }

  async clearThrottling(): Promise<void> {
    await this.admin("DELETE", "throttling");
  }

  /** A Standard static public IP of the user's own (no Portico tags). */
  async createPublicIp(name: string, tags: Record<string, string> = {}): Promise<PublicIPAddress> {
    return this.network.publicIPAddresses.createOrUpdate(
      this.resourceGroup,
      name,
      {
        location: AZURE_WORLD.location,
        sku: { name: "Standard", tier: "Regional" },
        publicIPAllocationMethod: "Static",
        tags,
      },
      { updateIntervalInMs: 20 },
    );
  }

  private async seed(): Promise<void> {
    const w = AZURE_WORLD;
    const token = await this.credential.getToken("https://management.azure.com/.default");
    const res = await fetch(
      `${this.url}/subscriptions/${this.subscriptionId}/resourcegroups/${w.resourceGroup}?api-version=2024-11-01`,
      {
        method: "PUT",
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
        body: JSON.stringify({ location: w.location }),
      },
    );
    if (!res.ok) throw new EnvironmentError(`creating resource group ${w.resourceGroup}: HTTP ${res.status}`);
    const poll = { updateIntervalInMs: 20 };
    await this.network.networkSecurityGroups.createOrUpdate(
      w.resourceGroup,
      w.securityGroupName,
      { location: w.location },
      poll,
    );
    await this.network.virtualNetworks.createOrUpdate(
      w.resourceGroup,
      w.vnetName,
      {
        location: w.location,
        addressSpace: { addressPrefixes: [w.vnetPrefix, w.vnetPrefixV6] },
        subnets: [
          { name: w.subnetName, addressPrefixes: [w.subnetPrefix, w.subnetPrefixV6] },
          { name: w.internalSubnetName, addressPrefixes: [w.internalSubnetPrefix, w.internalSubnetPrefixV6] },
          { name: w.podSubnetName, addressPrefixes: [w.podSubnetPrefix, w.podSubnetPrefixV6] },
        ],
      },
      poll,
    );
  }

  /**
   * Reports the rules' members as a prober would (test/emulators/azure/ruleHealth.ts): rule ID → address →
   * Up or Down; a member not listed is Down. Until the first report every member is Up.
   */
  async reportRuleHealth(rules: Record<string, Record<string, "Up" | "Down">>): Promise<void> {
    await this.admin("PUT", "ruleHealth", { rules });
  }

  private async admin(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.url}/_emulator/${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    });
    if (!res.ok)
      throw new EnvironmentError(`Azure emulator ${method} /_emulator/${path}: HTTP ${res.status}`);
    return res.json();
  }
}
