// `porticoctl migrate`: before anything changes, what Portico will do with each Service it would serve — adopt
// another controller's load balancer in place, keep what it has, recreate (and why), or refuse — computed by the
// same intent and provider plan as the real run. Providers say it in their plan's lines, by convention starting
// with the verdict ("adopt …", "keep …", "recreate: …", "refuse: …"); anything else is what the plan would change.
import {
  CustomObjectsApi,
  type CoordinationV1Api,
  type CoreV1Api,
  type DiscoveryV1Api,
  type KubeConfig,
} from "@kubernetes/client-node";
import {
  classServedUnder,
  wantsLoadBalancer,
  type ClassConfig,
  AWS_LOAD_BALANCER_CLASS,
  AZURE_LOAD_BALANCER_CLASS,
  LBC_NLB_CLASS,
  METAL_LOAD_BALANCER_CLASS,
  providerOfClass,
} from "../../providers/classes.ts";
import { ConfigurationError } from "../../providers/errors.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";
import { buildIntent, SERVICE_NAME_LABEL } from "../intent.ts";
import { parseLabelSelector } from "../../shared/labelSelector.ts";
import type { PublishedSettings } from "../publishedSettings.ts";
import type { RunningController } from "./controllers.ts";
import type { Printer } from "./render.ts";
import type { CloudAccess } from "../../providers/descriptor.ts";
import { inspectorFor, PROVIDERS } from "../../providers/registry.ts";

export type Verdict = "refuse" | "recreate" | "adopt" | "keep" | "change" | "error";

/** The verdict a plan's lines carry: the gravest first, so a refusal is never hidden behind an adoption. */
export function verdictOf(lines: readonly string[]): Verdict {
  for (const verdict of ["refuse", "recreate", "adopt", "keep"] as const)
    if (lines.some((l) => l === verdict || l.startsWith(`${verdict} `) || l.startsWith(`${verdict}:`)))
      return verdict;
  return lines.length ? "change" : "keep";
}

const HEALTH: Record<Verdict, "ok" | "warn" | "bad" | undefined> = {
  adopt: "ok",
  keep: "ok",
  change: undefined,
  recreate: "warn",
  refuse: "bad",
  error: "bad",
};

export interface MigrateOptions {
  namespace?: string;
  /** From --cluster-name; otherwise the serving controller's published one. */
  clusterName?: string;
  /** The AWS Load Balancer Controller's cluster name (default: Portico's). */
  lbcCluster?: string;
  /** Where the AWS Load Balancer Controller's leader Lease is. */
  lbcLease: { namespace: string; name: string };
  /** Preview with --aws-take-over-lbc-recreate. */
  recreate: boolean;
  controllers: readonly RunningController[];
  access?: CloudAccess;
  /** The provider moved to, where no controller of it runs yet (default aws). */
  provider?: "aws" | "azure" | "metal";
  /** As a controller started with --default-load-balancer: unclassed Services are Portico's too. */
  defaultForUnclassed?: boolean;
}

interface Row {
  service: string;
  verdict: Verdict;
  lines: string[];
}

export async function migrate(
  kc: KubeConfig,
  api: { core: CoreV1Api; discovery: DiscoveryV1Api; coordination: CoordinationV1Api },
  printer: Printer,
  opts: MigrateOptions,
): Promise<number> {
  const services = opts.namespace
    ? await api.core.listNamespacedService({ namespace: opts.namespace })
    : await api.core.listServiceForAllNamespaces();
  const target = { provider: opts.provider ?? "aws", defaultForUnclassed: opts.defaultForUnclassed ?? false };
  const nodes = (await api.core.listNode()).items;
  const providers = new Map<string, LoadBalancerProvider | undefined>();
  const liveController = PROVIDERS.aws.lbcLeaseReader(api.coordination, opts.lbcLease);
  const rows: Row[] = [];
  const custom = kc.makeApiClient(CustomObjectsApi);
  const bindingsOf = new Map<string, Promise<TargetGroupBinding[]>>();
  const bindings = (namespace: string) => {
    if (!bindingsOf.has(namespace)) bindingsOf.set(namespace, lbcBindings(custom, namespace));
    return bindingsOf.get(namespace)!;
  };
  for (const svc of services.items) {
    const namespace = svc.metadata!.namespace!;
    const found = servingConfigs(opts.controllers, target, namespace).find((c) =>
      wantsLoadBalancer(svc, c.classes),
    );
    if (!found) continue;
    const name = `${namespace}/${svc.metadata!.name}`;
    const cls = classServedUnder(svc, found.classes);
    const kind = providerOfClass(cls) ?? found.settings?.provider;
    const clusterName = opts.clusterName || found.settings?.clusterName;
    if (!clusterName && kind !== "metal") {
      rows.push(
        failed(name, "no running controller publishes the cluster name names depend on: give --cluster-name"),
      );
      continue;
    }
    const key = `${kind}/${cls}`;
    if (!providers.has(key)) {
      providers.set(
        key,
        kind === "aws"
          ? await PROVIDERS.aws.takeOverPlanner(clusterName!, opts, liveController)
          : kind === "metal"
            ? await PROVIDERS.metal.snapshotPlanner(kc, api.core, {
                defaultForUnclassed: found.classes.defaultForUnclassed,
              })
            : await inspectorFor(cls, clusterName!, opts.access),
      );
    }
    const provider = providers.get(key);
    if (!provider) {
      rows.push(failed(name, `class ${cls} has no planner here (for Azure, give --azure-config)`));
      continue;
    }
    const slices = await api.discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `${SERVICE_NAME_LABEL}=${svc.metadata!.name}`,
    });
    try {
      const nodeSelector = found.settings?.nodeSelector
        ? parseLabelSelector(found.settings.nodeSelector)
        : undefined;
      const intent = buildIntent(svc, nodes, slices.items, cls, nodeSelector ? { nodeSelector } : {});
      const { operations } = await provider.plan(intent);
      const left = kind === "aws" ? bindingLines(await bindings(namespace), svc.metadata!.name!) : [];
      rows.push({ service: name, verdict: verdictOf(operations), lines: [...operations, ...left] });
    } catch (err) {
      if (!(err instanceof ConfigurationError)) throw err;
      rows.push(failed(name, err.message));
    }
  }
  if (printer.structured) printer.data(rows);
  else if (!rows.length) printer.line("no Service that Portico would serve");
  else
    for (const r of rows) {
      printer.line(`${printer.paint(r.service, "bold")}  ${printer.paint(r.verdict, HEALTH[r.verdict])}`);
      printer.tree(
        r.lines.length
          ? r.lines.map((label) => ({ label }))
          : [{ label: "nothing to do: the cloud already matches", health: "ok" }],
      );
    }
  return rows.some((r) => r.verdict === "refuse" || r.verdict === "error") ? 1 : 0;
}

function failed(service: string, message: string): Row {
  return { service, verdict: "error", lines: [message] };
}

/**
 * Which of a namespace's Services Portico would serve, and under which controller's settings: the classes of each
 * running controller whose scope takes in the namespace (an AWS one's with the AWS Load Balancer Controller's, as
 * with --aws-take-over-lbc), and where no such controller serves the class of the provider the user moves to, that
 * class as a controller started for it would serve it (`defaultForUnclassed`: started with
 * --default-load-balancer, serving unclassed Services too). A controller confined to another namespace neither
 * serves these Services nor stands for the provider here.
 */
export function servingConfigs(
  controllers: readonly RunningController[],
  target: { provider: "aws" | "azure" | "metal"; defaultForUnclassed: boolean } = {
    provider: "aws",
    defaultForUnclassed: false,
  },
  namespace?: string,
): { classes: ClassConfig; settings?: PublishedSettings }[] {
  const running = controllers
    .filter((c) => c.fresh && c.settings)
    .filter((c) => !c.settings!.namespace || namespace === undefined || c.settings!.namespace === namespace)
    .map((c) => ({
      settings: c.settings!,
      classes: {
        loadBalancerClass: c.settings!.loadBalancerClass,
        defaultForUnclassed: c.settings!.defaultForUnclassed,
        alsoServes: [
          ...(c.settings!.alsoServes ?? []),
          ...(c.settings!.provider === "aws" ? [LBC_NLB_CLASS] : []),
        ],
      },
    }));
  const loadBalancerClass = {
    aws: AWS_LOAD_BALANCER_CLASS,
    azure: AZURE_LOAD_BALANCER_CLASS,
    metal: METAL_LOAD_BALANCER_CLASS,
  }[target.provider];
  // A running controller of the provider's own class speaks for it; one of a class of its own does not.
  const speaksForTarget = (c: (typeof running)[number]) =>
    c.settings.provider === target.provider && c.classes.loadBalancerClass === loadBalancerClass;
  if (running.some(speaksForTarget)) return running;
  return [
    ...running,
    {
      classes: {
        loadBalancerClass,
        defaultForUnclassed: target.defaultForUnclassed,
        alsoServes: target.provider === "aws" ? [LBC_NLB_CLASS] : [],
      },
    },
  ];
}

/** The parts of the AWS Load Balancer Controller's TargetGroupBinding (elbv2.k8s.aws/v1beta1) read here. */
export interface TargetGroupBinding {
  metadata?: { name?: string; namespace?: string };
  spec?: { serviceRef?: { name?: string }; targetGroupARN?: string };
}

/**
 * The Service's TargetGroupBindings: LBC's own objects, left as they are. A running LBC registers and deregisters
 * targets by them, also in target groups Portico has taken over, so they must go with LBC.
 */
export function bindingLines(all: readonly TargetGroupBinding[], service: string): string[] {
  return all
    .filter((b) => b.spec?.serviceRef?.name === service)
    .map(
      (b) =>
        `keep TargetGroupBinding ${b.metadata?.namespace}/${b.metadata?.name} as it is (the AWS Load Balancer Controller's, for ${b.spec?.targetGroupARN ?? "no target group"}): delete it once LBC is gone (remove its finalizer elbv2.k8s.aws/resources first), or a running LBC would change the targets of a group Portico owns`,
    );
}

/** LBC's TargetGroupBindings in a namespace; none where its CRD is not installed or may not be read. */
async function lbcBindings(custom: CustomObjectsApi, namespace: string): Promise<TargetGroupBinding[]> {
  try {
    const list = (await custom.listNamespacedCustomObject({
      group: "elbv2.k8s.aws",
      version: "v1beta1",
      namespace,
      plural: "targetgroupbindings",
    })) as { items?: TargetGroupBinding[] };
    return list.items ?? [];
  } catch {
    return [];
  }
}
