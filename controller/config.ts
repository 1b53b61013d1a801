// The controller's configuration, from command-line flags (each with an environment variable fallback).
import { parseArgs } from "node:util";
import type { FlagTable, FlagValues, ProviderDescriptor } from "../providers/descriptor.ts";
import {
  DESCRIPTORS,
  descriptorNamed,
  providerChoices,
  PROVIDER_NAMES,
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
  /** The provider's own settings, as its descriptor read them from its flags (providers/<name>/descriptor.ts). */
  settings: unknown;
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
} as const satisfies FlagTable;

/** Each provider's own flags, read by it (providers/<name>/descriptor.ts), and whose they are. */
const PROVIDER_FLAGS: FlagTable = Object.assign({}, ...DESCRIPTORS.map((d) => d.flags)) as FlagTable;
const FLAG_OWNER = new Map(DESCRIPTORS.flatMap((d) => Object.keys(d.flags).map((flag) => [flag, d.name])));

const COMMON_USAGE = `portico-controller: reconciles LoadBalancer Services into cloud load balancers

  --provider NAME                   the provider: ${PROVIDER_NAMES.join(", ")} (env PORTICO_PROVIDER, default ${PROVIDER_NAMES[0]})
  --cluster-name NAME               names this cluster in ownership tags (env PORTICO_CLUSTER_NAME, required)
  --load-balancer-class CLASS       the class served (default: the provider's own class)
  --default-load-balancer           also serve LoadBalancer Services without a class
  --namespace NS                    serve one namespace only (default: all)
  --node-selector SELECTOR          only nodes matching this label selector are targets
  --workers N                       Services reconciled at once (default 4)
  --resync-period SECONDS           look at every Service again this often (default 600)
  --orphan-collection-period SECONDS
                                    look for cloud resources of Services that no longer exist this often
                                    (default 600)
  --security-rule-check-period SECONDS
                                    providers with security rules (NLB security groups and backend rules, NSG
                                    rules): compare those Portico made with the cloud this often, for the whole
                                    cluster in a read or two, and restore those changed by hand (default 60)
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
  --kubeconfig FILE                 outside a cluster (env KUBECONFIG)`;

/** The controller's help: its own flags, then each provider's under its name (providers/<name>/descriptor.ts). */
export const USAGE = [
  COMMON_USAGE,
  ...DESCRIPTORS.map((d) => `  ${d.name} (--provider ${d.name}):\n${d.usage}`),
].join("\n");

/** Every option the command line accepts, for the reference that lists them. */
export const OPTION_NAMES: readonly string[] = [...Object.keys(OPTIONS), ...Object.keys(PROVIDER_FLAGS)];

export function parseConfig(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): ControllerConfig & { kubeconfig?: string } {
  const parsed = parseArgs({
    args: argv,
    strict: true,
    options: { ...PROVIDER_FLAGS, ...OPTIONS },
  });
  const values = parsed.values as ParsedValues<typeof OPTIONS> & FlagValues;
  if (values.help) throw new UsageError(USAGE);
  const provider = values.provider ?? env.PORTICO_PROVIDER ?? PROVIDER_NAMES[0]!;
  const descriptor = descriptorNamed(provider);
  if (!descriptor) throw new UsageError(`--provider ${provider} is not available; use ${providerChoices()}`);
  const chosen = provider as ProviderName;
  // Another provider's flag would do nothing here: refused, never ignored.
  for (const flag of Object.keys(values)) {
    const owner = FLAG_OWNER.get(flag);
    if (owner && owner !== chosen)
      throw new UsageError(
        `--${flag} is the ${owner} provider's; this controller runs --provider ${chosen}: remove it`,
      );
  }
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
  const settings = descriptor.settings(values, env, common);
  const loadBalancerClass = values["load-balancer-class"] ?? descriptor.loadBalancerClass;
  const alsoServes = descriptor.alsoServes?.(settings) ?? [];
  return {
    provider: chosen,
    clusterName,
    loadBalancerClass,
    ...(alsoServes.length ? { alsoServes: [...alsoServes] } : {}),
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
    settings,
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
  };
}

/** The configured provider's descriptor. */
export function descriptorOf(config: ControllerConfig): ProviderDescriptor<unknown> {
  return descriptorNamed(config.provider)!;
}

/** The controller's own flags as parseArgs gives them: a string or a boolean by the flag's type. */
type ParsedValues<T extends FlagTable> = {
  [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string;
};
