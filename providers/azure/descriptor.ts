// The Azure provider as the controller and porticoctl know it (providers/descriptor.ts): Standard Load Balancers
// for the class portico.io/azure-lb, configured by cloud-provider-azure's cloud-config (azure.json).
import { readFileSync } from "node:fs";
import { UsageError } from "../../shared/usageError.ts";
import { AZURE_LOAD_BALANCER_CLASS } from "../classes.ts";
import type { CloudAccess, FlagTable, ProviderDescriptor } from "../descriptor.ts";
import { AzureConfigError, parseAzureConfig, type AzureConfig } from "./config.ts";

export type { AzureConfig };

/** Retries of one ARM request: a person is waiting for the answer, so a struggling ARM is reported, not waited out. */
const AZURE_INSPECT_RETRIES = 2;

/**
 * The Azure provider's configuration: the cloud-config file (if any) with the environment's overrides. The
 * controller and porticoctl read it alike, so porticoctl looks where the controller made things.
 */
export function readAzureConfig(file: string | undefined, env: NodeJS.ProcessEnv): AzureConfig {
  const flag = file ? `--azure-config ${file}` : "--azure-config";
  let json: unknown = {};
  if (file) {
    try {
      json = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new UsageError(`${flag}: ${(err as Error).message}`);
    }
  }
  try {
    return parseAzureConfig(json, env);
  } catch (err) {
    if (err instanceof AzureConfigError) throw new UsageError(`${flag}: ${err.message}`);
    throw err;
  }
}

export const AZURE = {
  name: "azure",
  loadBalancerClass: AZURE_LOAD_BALANCER_CLASS,
  inspects: [AZURE_LOAD_BALANCER_CLASS],
  flags: { "azure-config": { type: "string" } } as const satisfies FlagTable,
  /** Read only for a controller of this provider: the file it names may exist only there. */
  settings: (values, env, common) =>
    common.provider === "azure"
      ? readAzureConfig((values["azure-config"] as string | undefined) ?? env.PORTICO_AZURE_CONFIG, env)
      : undefined,
  needs: (config) => ({
    namespaces: (config?.multipleStandardLoadBalancerConfigurations ?? []).some(
      (c) => c.serviceNamespaceSelector !== undefined,
    ),
  }),
  async start(config, context) {
    if (!config) throw new Error("provider azure needs the azure section of the configuration");
    const { AzureProvider } = await import("./provider.ts");
    // The cache's Services tell who may take over a public IP its Services share when its owner goes.
    const { clusterName, cluster } = context;
    const azure = new AzureProvider({ clusterName, services: cluster.services, ...config });
    azure.clients.onCall((...call) => context.onCloudCall(...call));
    return { provider: azure };
  },
  async inspector(clusterName, access: CloudAccess) {
    const config = access.azure as AzureConfig | undefined;
    if (!config) return undefined;
    const { AzureProvider } = await import("./provider.ts");
    return new AzureProvider({ ...config, clusterName, maxRetries: AZURE_INSPECT_RETRIES });
  },
  inspectionHint: (access: CloudAccess) =>
    access.azure
      ? undefined
      : "for the Azure load balancer's detail, give --azure-config FILE (the controller's azure.json) or set PORTICO_AZURE_CONFIG",

  readConfig: readAzureConfig,
} satisfies ProviderDescriptor<AzureConfig | undefined> & Record<string, unknown>;
