// The AWS provider as the controller and porticoctl know it (providers/descriptor.ts): NLBs for the class
// portico.io/aws-nlb, and the AWS Load Balancer Controller's class when taking over from it.
import { UsageError } from "../../shared/usageError.ts";
import type { CloudAccess, FlagTable, FlagValues, ProviderDescriptor } from "../descriptor.ts";
import { AWS_LOAD_BALANCER_CLASS, LBC_NLB_CLASS } from "../classes.ts";
import type { LoadBalancerProvider } from "../provider.ts";
import { AWS_ANNOTATION_CATALOG } from "./annotations/catalog.ts";
import { AWS_FLAGS, AWS_USAGE, awsSettings, LBC_LEADER_LEASE, type AwsSettings } from "./settings.ts";
import { lbcFinalizerReleaser, lbcLeaseReader } from "./lbc/kubernetes.ts";

export type { AwsSettings };

/** What a controller publishes of its AWS settings: porticoctl judges Services by the same defaults and limits. */
interface PublishedAws {
  region?: string;
  defaultScheme?: "internal" | "internet-facing";
  rulesPerSecurityGroup?: number;
}

/** The defaults and limits porticoctl's AWS provider takes from the serving controller's published settings. */
function publishedLimits(access: CloudAccess) {
  const published = (access.published ?? {}) as PublishedAws;
  return {
    ...(published.defaultScheme ? { defaultScheme: published.defaultScheme } : {}),
    ...(published.rulesPerSecurityGroup ? { rulesPerSecurityGroup: published.rulesPerSecurityGroup } : {}),
  };
}

/** porticoctl migrate's flags, as the controller's --aws-take-over-lbc ones. */
const TOOL_FLAGS = {
  "lbc-cluster": { type: "string" },
  "lbc-lease": { type: "string" },
  "allow-recreate": { type: "boolean" },
} as const satisfies FlagTable;

/** The take-over migrate previews, from its flags: LBC's cluster name, its Lease, whether a new NLB may replace one. */
interface TakeOverPreview {
  cluster?: string;
  recreate: boolean;
  lease: { namespace: string; name: string };
}

function readTakeOverPreview(values: FlagValues): TakeOverPreview {
  const [namespace, name, ...rest] = (
    (values["lbc-lease"] as string | undefined) ?? `${LBC_LEADER_LEASE.namespace}/${LBC_LEADER_LEASE.name}`
  ).split("/");
  if (!namespace || !name || rest.length) throw new UsageError("--lbc-lease must be NAMESPACE/NAME");
  const cluster = values["lbc-cluster"] as string | undefined;
  return {
    ...(cluster ? { cluster } : {}),
    recreate: (values["allow-recreate"] as boolean | undefined) ?? false,
    lease: { namespace, name },
  };
}

/** porticoctl's AWS provider: it reads only, and judges Services by the serving controller's defaults and limits. */
async function inspectorOf(clusterName: string, access: CloudAccess): Promise<LoadBalancerProvider> {
  const { AwsProvider } = await import("./provider.ts");
  return new AwsProvider({ clusterName, maxAttempts: 3, ...publishedLimits(access) });
}

export const AWS = {
  name: "aws",
  loadBalancerClass: AWS_LOAD_BALANCER_CLASS,
  inspects: [AWS_LOAD_BALANCER_CLASS, LBC_NLB_CLASS],
  namesByCluster: true,
  annotations: AWS_ANNOTATION_CATALOG,
  flags: AWS_FLAGS,
  usage: AWS_USAGE,
  settings: awsSettings,
  // Taking over, the controller serves the AWS Load Balancer Controller's class beside its own: one controller
  // (one set of shared backend rules) for the cluster's NLBs.
  alsoServes: (settings) => (settings.takeOverLbc ? [LBC_NLB_CLASS] : []),
  publish: (settings): PublishedAws => ({
    ...(settings.region ? { region: settings.region } : {}),
    defaultScheme: settings.defaultScheme,
    ...(settings.rulesPerSecurityGroup ? { rulesPerSecurityGroup: settings.rulesPerSecurityGroup } : {}),
  }),
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
  inspector: inspectorOf,
  /**
   * migrate plans as a controller taking over would run: LBC's NLBs adopted in place, reading only (no finalizer
   * is released); plan reads as the inspector does.
   */
  async planner(context) {
    const { AwsProvider } = await import("./provider.ts");
    if (context.purpose === "plan") return inspectorOf(context.clusterName, context.access);
    const takeOver = (context.access.given as TakeOverPreview | undefined) ?? readTakeOverPreview({});
    return new AwsProvider({
      clusterName: context.clusterName,
      maxAttempts: 3,
      ...publishedLimits(context.access),
      takeOverLbc: {
        cluster: takeOver.cluster || context.clusterName,
        recreate: takeOver.recreate,
        liveController: lbcLeaseReader(context.coordination, takeOver.lease),
      },
    });
  },
  async migrationNotes(context, namespace, name) {
    const { bindingNotes } = await import("./lbc/bindings.ts");
    if (!notes.has(context.kc)) notes.set(context.kc, bindingNotes(context.kc));
    return notes.get(context.kc)!(namespace, name);
  },
  cloudErrorFix: (denied) =>
    denied
      ? "give the controller's identity the policy in manifests/aws/iam-policy.json"
      : "see the AWS error above",
  tool: {
    flags: TOOL_FLAGS,
    usage: `      --lbc-cluster NAME    migrate, as the controller's --aws-take-over-lbc-cluster: the cluster name the AWS
                            Load Balancer Controller tagged with (default: --cluster-name)
      --lbc-lease NS/NAME   its leader Lease (default kube-system/aws-load-balancer-controller-leader)
      --allow-recreate      as --aws-take-over-lbc-recreate: a new NLB where its NLB cannot serve in place`,
    read: readTakeOverPreview,
  },
} satisfies ProviderDescriptor<AwsSettings>;

/** migrate's readers of LBC's TargetGroupBindings, one per run (its KubeConfig): one list per namespace. */
const notes = new WeakMap<object, (namespace: string, service: string) => Promise<string[]>>();
