// Portico's Azure emulator: an HTTPS server that behaves like Azure Resource Manager for Microsoft.Network load
// balancers, public IPs, virtual networks and NSGs, and like Microsoft Entra ID for the client-credentials flow, so
// that the real @azure/arm-network client and @azure/identity credentials talk to it unchanged.
//
// Connecting a client in the same process:
//   const azure = await startAzureEmulator();
//   trustCertificateAuthority(azure.caCertPath);          // instead of NODE_EXTRA_CA_CERTS, see trust.ts
//   Object.assign(process.env, azure.environment);        // AZURE_TENANT_ID/CLIENT_ID/CLIENT_SECRET/AUTHORITY_HOST
//   const credential = new DefaultAzureCredential({ disableInstanceDiscovery: true });
//   const network = new NetworkManagementClient(credential, azure.subscriptionId, { endpoint: azure.url });
//
// `disableInstanceDiscovery` is needed because MSAL validates any authority host it does not know by asking
// login.microsoftonline.com, which a test machine cannot reach; with it, MSAL reads the emulator's own OpenID
// discovery document instead. A process started after the emulator can use NODE_EXTRA_CA_CERTS=caCertPath.
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCertificateAuthority, issueCertificate } from "../../harness/pki.ts";
import type { LoggedRequest } from "./requestLog.ts";
import type { FaultRule } from "./faults.ts";
import type { ConfigChange, Limits } from "./kinds.ts";
import { DOCUMENTED_LIMITS, LIMITS_ENV, parseLimits } from "./limits.ts";
import { EmulatorServer } from "./server.ts";

export { trustCertificateAuthority } from "./trust.ts";
export type { FaultRule } from "./faults.ts";
export type { ConfigChange, EmulatorConfig, Limits } from "./kinds.ts";
export { DOCUMENTED_LIMITS, LIMITS_ENV } from "./limits.ts";

export interface AzureEmulatorOptions extends ConfigChange {
  /**
   * Overrides of Azure's documented limits (0: not checked); then those in PORTICO_AZURE_EMULATOR_LIMITS
   * (`name=N,...`); the rest are Azure's values.
   */
  limits?: Partial<Limits>;
  /** Where the CA and server certificate go; a temporary directory (removed on stop) by default. */
  dir?: string;
  /** TCP port; 0 (default) lets the kernel choose a free one. */
  port?: number;
  host?: string;
  /**
   * More addresses clients reach it at (through a forwarder, from another network namespace): its
   * certificate covers them, and it answers each client with URLs on the address that client used.
   */
  alsoReachedAt?: string[];
  subscriptionId?: string;
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** Seed for rate-based fault injection, so that a run can be repeated. */
  faultSeed?: number;
}

export interface AzureEmulator {
  /** ARM endpoint and authority host: https://127.0.0.1:port */
  url: string;
  caCertPath: string;
  subscriptionId: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The variables DefaultAzureCredential (EnvironmentCredential) reads, pointing at this emulator. */
  environment: Record<string, string>;
  stop(): Promise<void>;
  /** Empties all state, faults and the request log; restores the start configuration. */
  reset(): void;
  /** Requests served since the last reset, counted by operation ("PUT loadBalancers": 2, ...). */
  requestCounts(): Record<string, number>;
  requests(): LoggedRequest[];
  clearRequests(): void;
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  configure(config: ConfigChange): void;
  /** The server itself, for tests that look inside. */
  server: EmulatorServer;
}

export async function startAzureEmulator(options: AzureEmulatorOptions = {}): Promise<AzureEmulator> {
  const limits = { ...DOCUMENTED_LIMITS, ...parseLimits(process.env[LIMITS_ENV]), ...options.limits };
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "portico-azure-")));
  const ca = await createCertificateAuthority(dir, "Portico Azure emulator CA");
  const host = options.host ?? "127.0.0.1";
  const tls = await issueCertificate(ca, dir, "arm", {
    commonName: host,
    hosts: [...new Set([host, "127.0.0.1", "localhost", "::1", ...(options.alsoReachedAt ?? [])])],
  });
  const principal = {
    tenantId: options.tenantId ?? randomUUID(),
    clientId: options.clientId ?? randomUUID(),
    clientSecret: options.clientSecret ?? `secret-${randomUUID()}`,
  };
  const subscriptionId = options.subscriptionId ?? randomUUID();
  const server = new EmulatorServer({
    host,
    port: options.port ?? 0,
    cert: await readFile(tls.cert, "utf8"),
    key: await readFile(tls.key, "utf8"),
    subscriptionId,
    principal,
    faultSeed: options.faultSeed ?? 1,
    config: {
      operationDurationMs: options.operationDurationMs ?? 0,
      retryAfterSeconds: options.retryAfterSeconds ?? 1,
      conflictOnConcurrentWrite: options.conflictOnConcurrentWrite ?? true,
      listPageSize: options.listPageSize ?? 0,
      limits,
    },
  });
  const url = await server.start();
  return {
    url,
    caCertPath: ca.cert,
    subscriptionId,
    ...principal,
    environment: {
      AZURE_TENANT_ID: principal.tenantId,
      AZURE_CLIENT_ID: principal.clientId,
      AZURE_CLIENT_SECRET: principal.clientSecret,
      AZURE_AUTHORITY_HOST: url,
      AZURE_SUBSCRIPTION_ID: subscriptionId,
      AZURE_RESOURCE_MANAGER_ENDPOINT: url,
    },
    async stop() {
      await server.stop();
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
    reset: () => server.reset(),
    requestCounts: () => server.log.counts(),
    requests: () => server.log.all(),
    clearRequests: () => server.log.clear(),
    addFault: (rule) => server.faults.add(rule),
    clearFaults: () => server.faults.clear(),
    configure: ({ limits, ...config }) => {
      Object.assign(server.config, config);
      if (limits) server.config.limits = { ...server.config.limits, ...limits };
    },
    server,
  };
}
