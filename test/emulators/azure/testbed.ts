// Shared set-up for tests that talk to the emulator with the real clients: starts an emulator, makes this process
// trust its CA, points DefaultAzureCredential at it through the standard environment variables, and offers small
// builders for the resources most tests need.
import type { LoadBalancer, NetworkManagementClientOptionalParams } from "@azure/arm-network";
import { NetworkManagementClient } from "@azure/arm-network";
import { DefaultAzureCredential } from "@azure/identity";
import { afterAll, beforeAll, beforeEach } from "vitest";
import type { AzureEmulator, AzureEmulatorOptions } from "./index.ts";
import { startAzureEmulator, trustCertificateAuthority } from "./index.ts";

export const LOCATION = "eastus";

/** Poll options that keep long-running operations quick in tests. */
export const FAST = { updateIntervalInMs: 20 } as const;

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

export interface Testbed {
  azure: AzureEmulator;
  credential: DefaultAzureCredential;
  /** The real client, with the SDK's default retry policy. */
  network: NetworkManagementClient;
  /** The real client with retries off, for tests that look at a single error response. */
  strict: NetworkManagementClient;
  /** A raw ARM request with a valid bearer token, for headers and statuses the SDK hides. */
  arm(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RawResponse>;
  close(): Promise<void>;
}

export async function startTestbed(options: AzureEmulatorOptions = {}): Promise<Testbed> {
  const azure = await startAzureEmulator(options);
  trustCertificateAuthority(azure.caCertPath);
  const saved = Object.fromEntries(Object.keys(azure.environment).map((k) => [k, process.env[k]]));
  Object.assign(process.env, azure.environment);
  const credential = new DefaultAzureCredential({ disableInstanceDiscovery: true });
  const client = (extra: NetworkManagementClientOptionalParams = {}): NetworkManagementClient =>
    new NetworkManagementClient(credential, azure.subscriptionId, { endpoint: azure.url, ...extra });
  return {
    azure,
    credential,
    network: client(),
    strict: client({ retryOptions: { maxRetries: 0 } }),
    async arm(method, path, body, headers = {}) {
      const token = await credential.getToken("https://management.azure.com/.default");
      const url = path.startsWith("https://") ? path : `${azure.url}${path}`;
      const res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
      };
    },
    async close() {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await azure.stop();
    },
  };
}

/**
 * The emulator of a test file: started before its first test and stopped after its last; before each test it is
 * emptied (faults, configuration and request log too) and `seed` puts back what every test starts from, so no
 * test sees another's resources. The returned testbed can be used from inside tests and hooks.
 */
export function useTestbed(
  options: AzureEmulatorOptions = {},
  seed: (tb: Testbed) => Promise<void> = async () => {},
): Testbed {
  let current: Testbed | undefined;
  const started = (): Testbed => {
    if (!current) throw new Error("the testbed is started in beforeAll; use it from tests and hooks");
    return current;
  };
  beforeAll(async () => {
    current = await startTestbed(options);
  });
  afterAll(async () => {
    await current?.close();
  });
  beforeEach(async () => {
    started().azure.reset();
    await seed(started());
  });
  return {
    get azure() {
      return started().azure;
    },
    get credential() {
      return started().credential;
    },
    get network() {
      return started().network;
    },
    get strict() {
      return started().strict;
    },
    arm: (...args) => started().arm(...args),
    close: () => started().close(),
  };
}

export const subscriptionPath = (tb: Testbed): string => `/subscriptions/${tb.azure.subscriptionId}`;

export const networkId = (tb: Testbed, rg: string, type: string, name: string): string =>
  `${subscriptionPath(tb)}/resourceGroups/${rg}/providers/Microsoft.Network/${type}/${name}`;

export async function createResourceGroup(tb: Testbed, name: string, location = LOCATION): Promise<void> {
  const res = await tb.arm("PUT", `${subscriptionPath(tb)}/resourcegroups/${name}?api-version=2024-11-01`, {
    location,
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`creating resource group ${name}: HTTP ${res.status}`);
}

/** A resource group with a virtual network 10.0.0.0/16 and its subnet `nodes` (10.0.1.0/24). */
export async function seedNetwork(tb: Testbed, rg: string): Promise<{ vnetId: string; subnetId: string }> {
  await createResourceGroup(tb, rg);
  const vnet = await tb.network.virtualNetworks.createOrUpdate(
    rg,
    "vnet",
    {
      location: LOCATION,
      addressSpace: { addressPrefixes: ["10.0.0.0/16"] },
      subnets: [{ name: "nodes", addressPrefix: "10.0.1.0/24" }],
    },
    FAST,
  );
  return { vnetId: vnet.id!, subnetId: vnet.subnets![0]!.id! };
}

export async function createPublicIp(
  tb: Testbed,
  rg: string,
  name: string,
  sku: "Standard" | "Basic" = "Standard",
): Promise<string> {
  const pip = await tb.network.publicIPAddresses.createOrUpdate(
    rg,
    name,
    {
      location: LOCATION,
      sku: { name: sku },
      publicIPAllocationMethod: sku === "Standard" ? "Static" : "Dynamic",
    },
    FAST,
  );
  return pip.id!;
}

/**
 * A Standard public load balancer as Portico builds one: a frontend on `publicIpId`, an IP-based backend pool with
 * two pod addresses, an HTTP probe on the health-check node port and a TCP probe, and a rule per port.
 */
export function standardLoadBalancer(
  tb: Testbed,
  rg: string,
  name: string,
  publicIpId: string,
  vnetId: string,
): LoadBalancer {
  const lbId = networkId(tb, rg, "loadBalancers", name);
  return {
    location: LOCATION,
    sku: { name: "Standard" },
    tags: { "portico.io-cluster": "test" },
    frontendIPConfigurations: [{ name: "fe", publicIPAddress: { id: publicIpId } }],
    backendAddressPools: [
      {
        name: "pods",
        loadBalancerBackendAddresses: [
          { name: "pod-a", ipAddress: "10.0.1.10", virtualNetwork: { id: vnetId } },
          { name: "pod-b", ipAddress: "10.0.1.11", virtualNetwork: { id: vnetId } },
        ],
      },
    ],
    probes: [
      {
        name: "healthz",
        protocol: "Http",
        port: 31000,
        requestPath: "/healthz",
        intervalInSeconds: 5,
        numberOfProbes: 2,
      },
      { name: "tcp-8443", protocol: "Tcp", port: 8443 },
    ],
    loadBalancingRules: [
      {
        name: "tcp-80",
        protocol: "Tcp",
        frontendPort: 80,
        backendPort: 8080,
        frontendIPConfiguration: { id: `${lbId}/frontendIPConfigurations/fe` },
        backendAddressPool: { id: `${lbId}/backendAddressPools/pods` },
        probe: { id: `${lbId}/probes/healthz` },
      },
      {
        name: "tcp-443",
        protocol: "Tcp",
        frontendPort: 443,
        backendPort: 8443,
        idleTimeoutInMinutes: 30,
        enableTcpReset: true,
        frontendIPConfiguration: { id: `${lbId}/frontendIPConfigurations/fe` },
        backendAddressPool: { id: `${lbId}/backendAddressPools/pods` },
        probe: { id: `${lbId}/probes/tcp-8443` },
      },
    ],
  };
}

/** The status and ARM error code a rejected promise carries (RestError from the SDK). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ status: number | undefined; code: string | undefined; message: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { statusCode?: number; code?: string; message: string };
    return { status: e.statusCode, code: e.code, message: e.message };
  }
  throw new Error("expected the request to be rejected, but it succeeded");
}
