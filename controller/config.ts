// The controller's configuration, from command-line flags (each with an environment variable fallback).
import { parseArgs } from "node:util";
import { LBC_NLB_CLASS } from "../providers/classes.ts";
import {
  PROVIDER_NAMES,
  PROVIDERS,
  type AwsSettings,
  type AzureConfig,
  type MetalSettings,
  type ProviderName,
} from "../providers/registry.ts";
import { checkedListenAddress } from "../shared/metricsServer.ts";
import { UsageError } from "../shared/usageError.ts";
import type { WebhookConfig } from "./readinessGates/start.ts";

export interface ControllerConfig {
  provider: ProviderName;
  clusterName: string;
  loadBalancerClass: string;
  /** Classes served beside the controller's own (the AWS Load Balancer Controller's, with --aws-take-over-lbc). */
  alsoServes?: string[];
  defaultForUnclassed: boolean;
  namespace?: string;
  nodeSelector?: string;
  workers: number;
  resyncPeriodMs: number;
  orphanCollectionPeriodMs: number;
  /** How often the security rules Portico made are compared with the cloud (and restored). */
  securityRuleCheckPeriodMs: number;
  leaderElection: {
    enabled: boolean;
    namespace: string;
    name: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  metricsAddress: string;
  /** The readiness-gate webhook (controller/readinessGates/), when --webhook-address is given. */
  webhook?: WebhookConfig;
  /**
   * Bare metal: also allocate from MetalLB's IPAddressPools when installed (auto), always (on), or never (off,
   * and when absent).
   */
  metallb?: MetalSettings["metallb"];
  aws: AwsSettings;
  /** Required with provider azure. */
  azure?: AzureConfig;
}

/** The controller's command line; each provider adds its own (providers/<name>/descriptor.ts). */
const OPTIONS = {
  provider: { type: "string" },
  "cluster-name": { type: "string" },
  "load-balancer-class": { type: "string" },
  "default-load-balancer": { type: "boolean" },
  namespace: { type: "string" },
  "node-selector": { type: "string" },
  workers: { type: "string" },
  "resync-period": { type: "string" },
  "orphan-collection-period": { type: "string" },
  "security-rule-check-period": { type: "string" },
  "leader-elect": { type: "string" },
  "leader-election-namespace": { type: "string" },
  "leader-election-name": { type: "string" },
  "lease-duration": { type: "string" },
  "metrics-address": { type: "string" },
  "webhook-address": { type: "string" },
  "webhook-cert-dir": { type: "string" },
  "webhook-service": { type: "string" },
  "webhook-secret": { type: "string" },
  "webhook-configuration": { type: "string" },
  kubeconfig: { type: "string" },
  help: { type: "boolean" },
  // Each provider's own, read by it (providers/<name>/descriptor.ts).
  ...PROVIDERS.aws.flags,
  ...PROVIDERS.azure.flags,
  ...PROVIDERS.metal.flags,
} as const;

export const USAGE = `portico-controller: reconciles LoadBalancer Services into cloud load balancers

  --provider aws|azure|metal        the cloud, or metal for IP pools (env PORTICO_PROVIDER, default aws)
  --cluster-name NAME               names this cluster in ownership tags (env PORTICO_CLUSTER_NAME, required)
  --load-balancer-class CLASS       the class served (default portico.io/aws-nlb, azure-lb or metal)
  --default-load-balancer           also serve LoadBalancer Services without a class
  --aws-take-over-lbc               aws: serve the AWS Load Balancer Controller's Services instead of it, beside
                                    the controller's own (class service.k8s.aws/nlb, and unclassed ones of
                                    aws-load-balancer-type external or nlb-ip); their NLBs, listeners and
                                    target groups are taken over in place (same ARN and DNS name)
  --aws-take-over-lbc-cluster NAME  the cluster name the AWS Load Balancer Controller tagged its resources with
                                    (default: --cluster-name); implies --aws-take-over-lbc
  --aws-take-over-lbc-recreate      when its NLB cannot serve a Service in place (scheme, IP address type, security
                                    groups or static addresses differ), make a new one (a new DNS name) beside it
                                    instead of refusing
  --aws-lbc-leader-lease NS/NAME    its leader-election Lease: while renewed, nothing is taken over
                                    (default kube-system/aws-load-balancer-controller-leader)
  --namespace NS                    serve one namespace only (default: all)
  --node-selector SELECTOR          only nodes matching this label selector are targets
  --workers N                       Services reconciled at once (default 4)
  --resync-period SECONDS           look at every Service again this often (default 600)
  --orphan-collection-period SECONDS
                                    look for cloud resources of Services that no longer exist this often
                                    (default 600)
  --security-rule-check-period SECONDS
                                    aws, azure: compare the security rules Portico made (NLB security groups and
                                    backend rules, NSG rules) with the cloud this often, for the whole cluster in
                                    a read or two, and restore those changed by hand (default 60)
  --leader-elect=false              run without leader election (one replica only)
  --leader-election-namespace NS    where the Lease lives (env POD_NAMESPACE, default portico-system)
  --leader-election-name NAME       the Lease's name (default portico-controller-<class, as a name>)
  --lease-duration SECONDS          how long a leader's Lease holds without renewal (default 15)
  --metrics-address HOST:PORT       /metrics, /healthz, /readyz (default :8080)
  --webhook-address HOST:PORT       serve the admission webhook that gives pods readiness gates (env
                                    PORTICO_WEBHOOK_ADDRESS; the manifests: :9443; default: not served)
  --webhook-cert-dir DIR            its certificate, tls.crt and tls.key (cert-manager's Secret, mounted); default:
                                    Portico makes its own, keeps it in a Secret and sets the webhook
                                    configuration's caBundle
  --webhook-configuration NAME      the MutatingWebhookConfiguration whose caBundle Portico sets (default: the one
                                    that sends pods to a webhook in the controller's namespace)
  --webhook-service NAME            the webhook's Service (default: the one that configuration names)
  --webhook-secret NAME             the Secret Portico keeps its certificate in (default <service>-cert)
  --metallb auto|on|off             metal: also allocate from MetalLB's IPAddressPools (metallb.io/v1beta1), read as
                                    they are: when the CRD is installed (auto, the default), always, or never
                                    (env PORTICO_METALLB)
  --metallb-namespace NS            where MetalLB's pools live (default metallb-system; env PORTICO_METALLB_NAMESPACE)
  --aws-region REGION               the AWS region (default: the SDK's, from AWS_REGION or the instance's metadata)
  --aws-default-scheme SCHEME       internal (default) or internet-facing
  --aws-observation-ttl SECONDS     reuse a full observation for target-only changes this long (default 60, 0: never)
  --aws-full-observation-period SECONDS
                                    and past that, while the account's load balancer and target group listings show
                                    it unchanged, this long: the longest listener or attribute drift goes unseen
                                    (default 3600)
  --aws-rules-per-security-group N  the inbound rules a security group may hold per address family: the account's
                                    EC2 quota (default 60); a Service whose NLB would need more is refused
  --azure-config FILE               cloud-provider-azure's cloud-config JSON (azure.json) (env PORTICO_AZURE_CONFIG);
                                    AZURE_SUBSCRIPTION_ID, AZURE_RESOURCE_MANAGER_ENDPOINT, PORTICO_AZURE_RESOURCE_GROUP,
                                    PORTICO_AZURE_LOCATION, PORTICO_AZURE_VNET_NAME, PORTICO_AZURE_SUBNET_NAME and
                                    PORTICO_AZURE_SECURITY_GROUP_NAME override its keys
  --kubeconfig FILE                 outside a cluster (env KUBECONFIG)`;

/** Every option the command line accepts, for the reference that lists them. */
export const OPTION_NAMES: readonly string[] = Object.keys(OPTIONS);

export function parseConfig(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): ControllerConfig & { kubeconfig?: string } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: OPTIONS,
  });
  if (values.help) throw new UsageError(USAGE);
  const provider = values.provider ?? env.PORTICO_PROVIDER ?? "aws";
  if (!(PROVIDER_NAMES as string[]).includes(provider))
    throw new UsageError(`--provider ${provider} is not available; use aws, azure or metal`);
  const chosen = provider as ProviderName;
  const clusterName = values["cluster-name"] ?? env.PORTICO_CLUSTER_NAME;
  if (!clusterName)
    throw new UsageError(
      "--cluster-name (or PORTICO_CLUSTER_NAME) is required: it names this cluster in ownership tags",
    );
  const seconds = (flag: string, value: string | undefined, fallback: number) => {
    const n = value === undefined ? fallback : Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number of seconds`);
    return n * 1000;
  };
  const workers = Number(values.workers ?? 4);
  if (!Number.isInteger(workers) || workers < 1)
    throw new UsageError("--workers must be a whole number of at least 1");
  const leaseDurationMs = seconds("--lease-duration", values["lease-duration"], 15);
  const common = {
    provider: chosen,
    clusterName,
    ...(values["load-balancer-class"] ? { loadBalancerClass: values["load-balancer-class"] } : {}),
  };
  const aws = PROVIDERS.aws.settings(values, env, common);
  const azure = PROVIDERS.azure.settings(values, env, common);
  const metal = PROVIDERS.metal.settings(values, env);
  const loadBalancerClass = values["load-balancer-class"] ?? PROVIDERS[chosen].loadBalancerClass;
  // Taking over, the controller serves the AWS Load Balancer Controller's class beside its own: one controller
  // (one set of shared backend rules) for the cluster's NLBs.
  return {
    provider: chosen,
    clusterName,
    loadBalancerClass,
    ...(aws.takeOverLbc ? { alsoServes: [LBC_NLB_CLASS] } : {}),
    defaultForUnclassed: values["default-load-balancer"] ?? false,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values["node-selector"] ? { nodeSelector: values["node-selector"] } : {}),
    workers,
    resyncPeriodMs: seconds("--resync-period", values["resync-period"], 600),
    orphanCollectionPeriodMs: seconds("--orphan-collection-period", values["orphan-collection-period"], 600),
    securityRuleCheckPeriodMs: seconds(
      "--security-rule-check-period",
      values["security-rule-check-period"],
      60,
    ),
    leaderElection: {
      enabled: values["leader-elect"] !== "false",
      namespace: values["leader-election-namespace"] ?? env.POD_NAMESPACE ?? "portico-system",
      name:
        values["leader-election-name"] ??
        `portico-controller-${loadBalancerClass.replace(/[^a-z0-9]+/g, "-")}`,
      identity: `${env.HOSTNAME ?? "portico"}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
      leaseDurationMs,
      renewDeadlineMs: (leaseDurationMs * 2) / 3,
      retryPeriodMs: leaseDurationMs / 7.5,
    },
    metricsAddress: checkedListenAddress("--metrics-address", values["metrics-address"] ?? ":8080"),
    ...((values["webhook-address"] ?? env.PORTICO_WEBHOOK_ADDRESS)
      ? {
          webhook: {
            address: checkedListenAddress(
              "--webhook-address",
              (values["webhook-address"] ?? env.PORTICO_WEBHOOK_ADDRESS)!,
            ),
            ...(values["webhook-cert-dir"] ? { certDir: values["webhook-cert-dir"] } : {}),
            namespace: values["leader-election-namespace"] ?? env.POD_NAMESPACE ?? "portico-system",
            ...(values["webhook-service"] ? { service: values["webhook-service"] } : {}),
            ...(values["webhook-secret"] ? { secret: values["webhook-secret"] } : {}),
            ...(values["webhook-configuration"] ? { configuration: values["webhook-configuration"] } : {}),
          },
        }
      : {}),
    metallb: metal.metallb,
    aws,
    ...(azure ? { azure } : {}),
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
  };
}

/** The settings of the configured provider, as its descriptor reads them (providers/registry.ts). */
export function providerSettings(
  config: ControllerConfig,
): AwsSettings | AzureConfig | MetalSettings | undefined {
  switch (config.provider) {
    case "aws":
      return config.aws;
    case "azure":
      return config.azure;
    case "metal":
      // Without the section (a configuration built in code), MetalLB's pools are not read.
      return { metallb: config.metallb ?? { mode: "off", namespace: "metallb-system" } };
  }
}
