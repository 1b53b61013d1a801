// The Azure provider as the controller and porticoctl know it (providers/descriptor.ts): Standard Load Balancers
// for the class portico.io/azure-lb, configured by cloud-provider-azure's cloud-config (azure.json).
import { readFileSync } from "node:fs";
import { UsageError } from "../../shared/usageError.ts";
import { AZURE_LOAD_BALANCER_CLASS } from "../classes.ts";
import type { CloudAccess, FlagTable, ProviderDescriptor } from "../descriptor.ts";
import { AzureConfigError, parseAzureConfig, type AzureConfig } from "./config.ts";
import { AZURE_ANNOTATION_CATALOG } from "./annotations/catalog.ts";
import { publishedAzure } from "./publishedConfig.ts";

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
  namesByCluster: true,
  annotations: AZURE_ANNOTATION_CATALOG,
  flags: { "azure-config": { type: "string" } } as const satisfies FlagTable,
  usage: `  --azure-config FILE               cloud-provider-azure's cloud-config JSON (azure.json) (env PORTICO_AZURE_CONFIG);
                                    AZURE_SUBSCRIPTION_ID, AZURE_RESOURCE_MANAGER_ENDPOINT, PORTICO_AZURE_RESOURCE_GROUP,
                                    PORTICO_AZURE_LOCATION, PORTICO_AZURE_VNET_NAME, PORTICO_AZURE_SUBNET_NAME and
                                    PORTICO_AZURE_SECURITY_GROUP_NAME override its keys`,
  settings: (values, env) =>
    readAzureConfig((values["azure-config"] as string | undefined) ?? env.PORTICO_AZURE_CONFIG, env),
  // Where things are, never a secret: porticoctl reads the load balancer where the controller made it.
  publish: publishedAzure,
  needs: (config) => ({
    namespaces: (config?.multipleStandardLoadBalancerConfigurations ?? []).some(
      (c) => c.serviceNamespaceSelector !== undefined,
    ),
  }),
  async start(config, context) {
    const { AzureProvider } = await import("./provider.ts");
    // The cache's Services tell who may take over a public IP its Services share when its owner goes.
    const { clusterName, cluster } = context;
    const azure = new AzureProvider({ clusterName, services: cluster.services, ...config });
    azure.clients.onCall((...call) => context.onCloudCall(...call));
    return { provider: azure };
  },
  async inspector(clusterName, access: CloudAccess) {
    const config = configOf(access);
    if (!config) return undefined;
    const { AzureProvider } = await import("./provider.ts");
    return new AzureProvider({ ...config, clusterName, maxRetries: AZURE_INSPECT_RETRIES });
  },
  inspectionHint: (access: CloudAccess) =>
    configOf(access)
      ? undefined
      : "for the Azure load balancer's detail, give --azure-config FILE (the controller's azure.json) or set PORTICO_AZURE_CONFIG",
  cloudErrorFix: (denied) =>
    denied
      ? "give the identity the role in manifests/azure/role-definition.json on the Azure config's resource groups"
      : "see the Azure error above",
  tool: {
    flags: { "azure-config": { type: "string" } } as const satisfies FlagTable,
    usage: `      --azure-config FILE   the controller's Azure cloud-config (azure.json), so status and doctor can read the
                            Azure load balancer (env PORTICO_AZURE_CONFIG; AZURE_* and PORTICO_AZURE_* override keys)`,
    /** The file the user names, read as the controller reads it; nothing when none is named. */
    read: (values, env) => {
      const file = (values["azure-config"] as string | undefined) ?? env.PORTICO_AZURE_CONFIG;
      return file ? readAzureConfig(file, env) : undefined;
    },
  },
} satisfies ProviderDescriptor<AzureConfig>;

/** The configuration porticoctl reads the cloud with: the file the user gave, else where the controller says it works. */
function configOf(access: CloudAccess): AzureConfig | undefined {
  return (access.given ?? access.published) as AzureConfig | undefined;
}
