// Builds the configured provider. The controller core knows providers only through this file and the
// LoadBalancerProvider interface. Each provider is loaded only when chosen: a cloud SDK is large, and a
// controller for one cloud should not carry the other's in memory.
import type { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import type { LoadBalancerProvider } from "../providers/provider.ts";
import type { ClusterCache } from "./cache.ts";
import { metalInventory } from "./metalInventory.ts";
import type { ControllerConfig } from "./config.ts";
import type { ControllerMetrics } from "./metrics.ts";

const THROTTLE_CODES = /Throttl|RequestLimitExceeded|TooManyRequests|^429$/;

export async function createProvider(
  config: ControllerConfig,
  metrics: ControllerMetrics,
  cache: ClusterCache,
  /** The apiserver, for providers that read or write more than the cache holds (AWS taking over LBC's NLBs). */
  kube?: { core: CoreV1Api; coordination: CoordinationV1Api },
): Promise<LoadBalancerProvider> {
  switch (config.provider) {
    case "aws": {
      const { AwsProvider } = await import("../providers/aws/provider.ts");
      const takeOver = config.aws.takeOverLbc;
      const { lbcLeaseReader, lbcFinalizerReleaser } = await import("./lbcTakeOver.ts");
      const aws = new AwsProvider({
        clusterName: config.clusterName,
        defaultScheme: config.aws.defaultScheme,
        observationTtlMs: config.aws.observationTtlMs,
        ...(config.aws.fullObservationPeriodMs !== undefined
          ? { fullObservationPeriodMs: config.aws.fullObservationPeriodMs }
          : {}),
        ...(config.aws.region ? { region: config.aws.region } : {}),
        ...(takeOver
          ? {
              takeOverLbc: {
                cluster: takeOver.cluster,
                recreate: takeOver.recreate,
                ...(kube
                  ? {
                      liveController: lbcLeaseReader(kube.coordination, takeOver.lease),
                      releaseFinalizer: lbcFinalizerReleaser(kube.core, cache),
                    }
                  : {}),
              },
            }
          : {}),
      });
      aws.clients.onCall((_service, ...call) => recordCall(metrics, ...call));
      return aws;
    }
    case "azure": {
      if (!config.azure) throw new Error("provider azure needs the azure section of the configuration");
      const { AzureProvider } = await import("../providers/azure/provider.ts");
      const azure = new AzureProvider({ clusterName: config.clusterName, ...config.azure });
      azure.clients.onCall((...call) => recordCall(metrics, ...call));
      return azure;
    }
    case "metal": {
      const { MetalProvider } = await import("../providers/metal/provider.ts");
      return new MetalProvider(
        metalInventory(cache, {
          loadBalancerClass: config.loadBalancerClass,
          defaultForUnclassed: config.defaultForUnclassed,
        }),
      );
    }
  }
}

/** One cloud call in the controller's metrics: its count, how long the cloud took, and whether it was throttled. */
function recordCall(
  metrics: ControllerMetrics,
  operation: string,
  outcome: "ok" | "error",
  code: string | undefined,
  seconds: number,
): void {
  metrics.cloudCalls.inc({ operation, outcome });
  metrics.cloudCallDuration.observe({ operation }, seconds);
  if (code && THROTTLE_CODES.test(code)) metrics.cloudThrottles.inc({ operation });
}
