// The AWS provider as the controller and porticoctl know it (providers/descriptor.ts): NLBs for the class
// portico.io/aws-nlb, and the AWS Load Balancer Controller's class when taking over from it.
import type { ProviderDescriptor } from "../descriptor.ts";
import { AWS_LOAD_BALANCER_CLASS, LBC_NLB_CLASS } from "../classes.ts";
import type { LoadBalancerProvider } from "../provider.ts";
import { AWS_FLAGS, awsSettings, LBC_LEADER_LEASE, type AwsSettings } from "./settings.ts";
import { lbcFinalizerReleaser, lbcLeaseReader } from "./lbc/kubernetes.ts";

export type { AwsSettings };

export const AWS = {
  name: "aws",
  loadBalancerClass: AWS_LOAD_BALANCER_CLASS,
  inspects: [AWS_LOAD_BALANCER_CLASS, LBC_NLB_CLASS],
  flags: AWS_FLAGS,
  settings: awsSettings,
  needs: () => ({}),
  async start(settings, context) {
    const { AwsProvider } = await import("./provider.ts");
    const takeOver = settings.takeOverLbc;
    const { kube } = context;
    const aws = new AwsProvider({
      clusterName: context.clusterName,
      defaultScheme: settings.defaultScheme,
      observationTtlMs: settings.observationTtlMs,
      ...(settings.rulesPerSecurityGroup ? { rulesPerSecurityGroup: settings.rulesPerSecurityGroup } : {}),
      ...(settings.fullObservationPeriodMs !== undefined
        ? { fullObservationPeriodMs: settings.fullObservationPeriodMs }
        : {}),
      ...(settings.region ? { region: settings.region } : {}),
      ...(takeOver
        ? {
            takeOverLbc: {
              cluster: takeOver.cluster,
              recreate: takeOver.recreate,
              ...(kube
                ? {
                    liveController: lbcLeaseReader(kube.coordination, takeOver.lease),
                    releaseFinalizer: lbcFinalizerReleaser(kube.core, context.cluster),
                  }
                : {}),
            },
          }
        : {}),
    });
    aws.clients.onCall((_service, ...call) => context.onCloudCall(...call));
    return { provider: aws };
  },
  async inspector(clusterName, access) {
    const { AwsProvider } = await import("./provider.ts");
    return new AwsProvider({
      clusterName,
      maxAttempts: 3,
      ...(access.awsDefaultScheme ? { defaultScheme: access.awsDefaultScheme } : {}),
      ...(access.awsRulesPerSecurityGroup ? { rulesPerSecurityGroup: access.awsRulesPerSecurityGroup } : {}),
    });
  },

  /** The AWS Load Balancer Controller's leader Lease, where it is unless told otherwise. */
  lbcLeaderLease: LBC_LEADER_LEASE,
  lbcLeaseReader,
  /** The provider as a controller taking over would run it, reading only (no finalizer is released). */
  async takeOverPlanner(
    clusterName: string,
    opts: { lbcCluster?: string; recreate: boolean },
    liveController: () => Promise<string | undefined>,
  ): Promise<LoadBalancerProvider> {
    const { AwsProvider } = await import("./provider.ts");
    return new AwsProvider({
      clusterName,
      maxAttempts: 3,
      takeOverLbc: { cluster: opts.lbcCluster || clusterName, recreate: opts.recreate, liveController },
    });
  },
} satisfies ProviderDescriptor<AwsSettings> & Record<string, unknown>;
