// `porticoctl plan -f service.yaml`: what Portico would create or change in the cloud for that Service, without
// doing it, computed by the same intent and plan code as the controller. A Service that does not exist yet is
// created as a server-side dry run first, so it has the node ports the apiserver would give it.
import {
  loadAllYaml,
  type CoordinationV1Api,
  type CoreV1Api,
  type DiscoveryV1Api,
  type KubeConfig,
  type V1Service,
} from "@kubernetes/client-node";
import { readFile } from "node:fs/promises";
import { ConfigurationError } from "../../providers/errors.ts";
import {
  accessOf,
  inspectionHint,
  plannerFor,
  providerForClass,
  type ToolAccess,
} from "../../providers/registry.ts";
import { buildIntent, SERVICE_NAME_LABEL } from "../intent.ts";
import { parseLabelSelector } from "../../shared/labelSelector.ts";
import { controllerFor, toolAccess, type RunningController } from "./controllers.ts";
import type { Printer } from "./render.ts";

export async function plan(
  kc: KubeConfig,
  api: { core: CoreV1Api; discovery: DiscoveryV1Api; coordination: CoordinationV1Api },
  printer: Printer,
  opts: {
    file: string;
    namespace?: string;
    /** From --cluster-name; otherwise the serving controller's published one. */
    clusterName?: string;
    /** The running controllers (controllers.ts): their cluster name and node selector, as they plan. */
    controllers?: readonly RunningController[];
    /** What the user gave porticoctl for the providers' clouds. */
    access?: ToolAccess;
  },
): Promise<number> {
  const docs = loadAllYaml(
    await readFile(opts.file === "-" ? "/dev/stdin" : opts.file, "utf8"),
  ) as V1Service[];
  const services = docs.filter((d) => d?.kind === "Service");
  if (!services.length) {
    printer.line(`${opts.file} holds no Service`);
    return 2;
  }
  const results = [];
  for (const doc of services) {
    const namespace = doc.metadata?.namespace ?? opts.namespace ?? "default";
    const svc = await live(api.core, { ...doc, metadata: { ...doc.metadata, namespace } });
    const cls = svc.spec?.loadBalancerClass;
    const name = `${namespace}/${svc.metadata?.name}`;
    const serving = controllerFor(svc, opts.controllers ?? []);
    const settings = serving?.settings;
    const clusterName = opts.clusterName || settings?.clusterName;
    const descriptor = providerForClass(cls);
    if (!clusterName && descriptor?.namesByCluster !== false) {
      results.push({
        service: name,
        error:
          "no running controller of its class publishes its cluster name, on which names depend: give --cluster-name",
      });
      continue;
    }
    // The serving controller's own defaults and limits: plan refuses and plans as it does.
    const tool = toolAccess(opts.access, settings);
    const provider = descriptor
      ? await plannerFor(descriptor, {
          purpose: "plan",
          clusterName: clusterName ?? "",
          access: accessOf(descriptor, tool),
          kc,
          core: api.core,
          coordination: api.coordination,
          classes: {
            loadBalancerClass: settings?.loadBalancerClass ?? descriptor.loadBalancerClass,
            defaultForUnclassed: settings?.defaultForUnclassed ?? false,
          },
        })
      : undefined;
    if (!provider || !cls) {
      const hint = inspectionHint(cls, tool);
      results.push({
        service: name,
        error: hint
          ? `class ${cls} cannot be planned here: ${hint}`
          : `class ${cls ?? "(none)"} is not one of Portico's: no planner here`,
      });
      continue;
    }
    const [nodes, slices] = await Promise.all([
      api.core.listNode(),
      api.discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `${SERVICE_NAME_LABEL}=${svc.metadata?.name}`,
      }),
    ]);
    try {
      // The controller's node selector decides the targets as much as the Service does.
      const nodeSelector = settings?.nodeSelector ? parseLabelSelector(settings.nodeSelector) : undefined;
      const planned = await provider.plan(
        buildIntent(svc, nodes.items, slices.items, cls, nodeSelector ? { nodeSelector } : {}),
      );
      results.push({ service: name, operations: planned.operations });
    } catch (err) {
      if (!(err instanceof ConfigurationError)) throw err;
      results.push({ service: name, error: err.message });
    }
  }
  if (printer.structured) printer.data(results);
  else
    for (const r of results) {
      printer.line(printer.paint(r.service, "bold"));
      if ("error" in r) printer.tree([{ label: r.error!, health: "bad" }]);
      else if (!r.operations.length)
        printer.tree([{ label: "nothing to do: the cloud already matches", health: "ok" }]);
      else printer.tree(r.operations.map((label) => ({ label })));
    }
  return results.some((r) => "error" in r) ? 1 : 0;
}

/** The Service as the apiserver has it, or would have it (dry-run create) — with UID and node ports. */
async function live(core: CoreV1Api, svc: V1Service): Promise<V1Service> {
  const ref = { name: svc.metadata!.name!, namespace: svc.metadata!.namespace! };
  const existing = await core
    .readNamespacedService(ref)
    .catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e as Error)));
  if (existing)
    return {
      ...existing,
      spec: { ...existing.spec, ...svc.spec, ports: mergePorts(existing, svc) },
      metadata: { ...existing.metadata, annotations: svc.metadata?.annotations ?? {} },
    };
  return core.createNamespacedService({ namespace: ref.namespace, body: svc, dryRun: "All" });
}

function mergePorts(existing: V1Service, wanted: V1Service) {
  return (wanted.spec?.ports ?? []).map((p) => ({
    ...p,
    nodePort:
      p.nodePort ??
      existing.spec?.ports?.find((e) => e.port === p.port && (e.protocol ?? "TCP") === (p.protocol ?? "TCP"))
        ?.nodePort,
  }));
}
