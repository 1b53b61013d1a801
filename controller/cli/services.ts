// The providers porticoctl reads the clouds through, per class.
import { AWS_LOAD_BALANCER_CLASS, AwsProvider } from "../../providers/aws/provider.ts";
import { LBC_NLB_CLASS } from "../../providers/classes.ts";
import type { AzureConfig } from "../../providers/azure/config.ts";
import { AZURE_LOAD_BALANCER_CLASS, AzureProvider } from "../../providers/azure/provider.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";

/** What porticoctl was given to read clouds that need more than a standard credential chain. */
export interface CloudAccess {
  /** The controller's Azure configuration (--azure-config or PORTICO_AZURE_CONFIG). */
  azure?: AzureConfig;
  /** The scheme the controller gives NLBs whose Service names none (its published settings). */
  awsDefaultScheme?: "internal" | "internet-facing";
}

/** Retries of one ARM request: a person is waiting for the answer, so a struggling ARM is reported, not waited out. */
const AZURE_INSPECT_RETRIES = 2;

/**
 * A provider for looking at the cloud; porticoctl only ever reads through it (inspect, plan). AWS needs no more
 * than the standard credential chain; Azure needs the controller's configuration to know where to look; other
 * providers show only what Kubernetes knows.
 */
export function inspectorFor(
  cls: string | undefined,
  clusterName: string,
  access: CloudAccess = {},
): LoadBalancerProvider | undefined {
  if (cls === AWS_LOAD_BALANCER_CLASS || cls === LBC_NLB_CLASS)
    return new AwsProvider({
      clusterName,
      maxAttempts: 3,
      ...(access.awsDefaultScheme ? { defaultScheme: access.awsDefaultScheme } : {}),
    });
  if (cls === AZURE_LOAD_BALANCER_CLASS && access.azure)
    return new AzureProvider({ ...access.azure, clusterName, maxRetries: AZURE_INSPECT_RETRIES });
  return undefined;
}

/** How to get a class's cloud detail when porticoctl cannot read its cloud without being told more. */
export function inspectionHint(cls: string | undefined, access: CloudAccess = {}): string | undefined {
  if (cls === AZURE_LOAD_BALANCER_CLASS && !access.azure)
    return "for the Azure load balancer's detail, give --azure-config FILE (the controller's azure.json) or set PORTICO_AZURE_CONFIG";
  return undefined;
}
