// `porticoctl migrate`: before anything changes, what Portico will do with each Service it would serve — adopt
// another controller's load balancer in place, keep what it has, recreate (and why), or refuse — computed by the
// same intent and provider plan as the real run. Providers say it in their plan's lines, by convention starting
// with the verdict ("adopt …", "keep …", "recreate: …", "refuse: …"); anything else is what the plan would change.
import {
  type CoordinationV1Api,
  type CoreV1Api,
  type DiscoveryV1Api,
  type KubeConfig,
} from "@kubernetes/client-node";
import { classServedUnder, wantsLoadBalancer, type ClassConfig } from "../../providers/classes.ts";
import { ConfigurationError } from "../../providers/errors.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";
import { buildIntent, SERVICE_NAME_LABEL } from "../intent.ts";
import { parseLabelSelector } from "../../shared/labelSelector.ts";
import type { PublishedSettings } from "../publishedSettings.ts";
import { toolAccess, type RunningController } from "./controllers.ts";
import type { Printer } from "./render.ts";
import {
  accessOf,
  descriptorNamed,
  inspectionHint,
  plannerFor,
  PROVIDER_NAMES,
  providerForClass,
  type ProviderName,
  type ToolAccess,
} from "../../providers/registry.ts";

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
  controllers: readonly RunningController[];
  access?: ToolAccess;
  /** The provider moved to, where no controller of it runs yet (default: the registry's first). */
  provider?: ProviderName;
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
  const target = {
    provider: opts.provider ?? PROVIDER_NAMES[0]!,
    defaultForUnclassed: opts.defaultForUnclassed ?? false,
  };
  const nodes = (await api.core.listNode()).items;
  const providers = new Map<string, LoadBalancerProvider | undefined>();
  const rows: Row[] = [];
  for (const svc of services.items) {
    const namespace = svc.metadata!.namespace!;
    const found = servingConfigs(opts.controllers, target, namespace).find((c) =>
      wantsLoadBalancer(svc, c.classes),
    );
    if (!found) continue;
    const name = `${namespace}/${svc.metadata!.name}`;
    const cls = classServedUnder(svc, found.classes);
    const descriptor = providerForClass(cls) ?? descriptorNamed(found.settings?.provider);
    const clusterName = opts.clusterName || found.settings?.clusterName;
    if (!clusterName && descriptor?.namesByCluster !== false) {
      rows.push(
        failed(name, "no running controller publishes the cluster name names depend on: give --cluster-name"),
      );
      continue;
    }
    const key = `${descriptor?.name}/${cls}`;
    const tool = toolAccess(opts.access, found.settings);
    const context = descriptor && {
      purpose: "migrate" as const,
      clusterName: clusterName ?? "",
      access: accessOf(descriptor, tool),
      kc,
      core: api.core,
      coordination: api.coordination,
      classes: found.classes,
    };
    if (!providers.has(key))
      providers.set(key, descriptor && context ? await plannerFor(descriptor, context) : undefined);
    const provider = providers.get(key);
    if (!provider || !descriptor || !context) {
      const hint = inspectionHint(cls, tool);
      rows.push(failed(name, `class ${cls} has no planner here${hint ? `: ${hint}` : ""}`));
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
      const left = (await descriptor.migrationNotes?.(context, namespace, svc.metadata!.name!)) ?? [];
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
  target: { provider: ProviderName; defaultForUnclassed: boolean } = {
    provider: PROVIDER_NAMES[0]!,
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
        alsoServes: [...(c.settings!.alsoServes ?? []), ...takenOver(c.settings!.provider)],
      },
    }));
  const loadBalancerClass = descriptorNamed(target.provider)!.loadBalancerClass;
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
        alsoServes: takenOver(target.provider),
      },
    },
  ];
}

/** The classes a provider can take over (read by its inspector besides its own): served as a take-over would. */
function takenOver(provider: string): string[] {
  const descriptor = descriptorNamed(provider);
  return descriptor ? descriptor.inspects.filter((c) => c !== descriptor.loadBalancerClass) : [];
}
