// `porticoctl status [ns/name]`: every Portico Service with its provider, address and condition, and below it
// what exists in the cloud and how healthy each target is.
import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import type { InspectNode } from "../../providers/provider.ts";
import { READY_CONDITION, SERVING_CONDITION } from "../status.ts";
import { controllerFor, toolAccess, type RunningController } from "./controllers.ts";
import type { Printer } from "./render.ts";
import { classOf, isPortico, key, providerOf } from "./serviceClass.ts";
import { inspectionHint, inspectorFor, type ToolAccess } from "../../providers/registry.ts";

export interface StatusOptions {
  namespace?: string;
  allNamespaces: boolean;
  name?: string;
  /** From --cluster-name; otherwise each Service's serving controller's published one. */
  clusterName?: string;
  access?: ToolAccess;
  /** The running controllers and what they publish (controllers.ts). */
  controllers?: readonly RunningController[];
}

/** Where to look for a Service's cloud side: the flags the user gave, else what its controller publishes. */
function lookFor(svc: V1Service, opts: StatusOptions): { clusterName?: string; access: ToolAccess } {
  const settings = controllerFor(svc, opts.controllers ?? [])?.settings;
  const clusterName = opts.clusterName || settings?.clusterName;
  return { ...(clusterName ? { clusterName } : {}), access: toolAccess(opts.access, settings) };
}

export async function status(core: CoreV1Api, printer: Printer, opts: StatusOptions): Promise<number> {
  const services = await listServices(core, opts);
  const rows = [];
  for (const svc of services) {
    const condition = svc.status?.conditions?.find((c) => c.type === READY_CONDITION);
    const serving = svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
    const cls = classOf(svc);
    const ref = { namespace: svc.metadata!.namespace!, name: svc.metadata!.name!, uid: svc.metadata!.uid! };
    const where = lookFor(svc, opts);
    // Inspection finds a Service's resources by its UID tag, so an unknown cluster name does not stop it.
    const inspector = await inspectorFor(cls, where.clusterName ?? "", where.access);
    const hint = inspector ? undefined : inspectionHint(cls, where.access);
    let cloud: InspectNode[] = [];
    if (printer.format !== "text" || opts.name || services.length <= 20) {
      cloud = inspector?.inspect
        ? await inspector
            .inspect(ref)
            .catch((e: Error) => [{ label: `cannot read the cloud: ${e.message}`, health: "bad" as const }])
        : [];
    }
    rows.push({
      service: key(svc),
      provider: cls ? (providerOf(svc) ?? cls) : "default",
      addresses: (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.hostname ?? i.ip ?? ""),
      ready: condition?.status ?? "Unknown",
      reason: condition?.reason ?? "NotReconciled",
      message: condition?.message ?? "Portico has not reported on this Service yet",
      ...(serving
        ? {
            serving: { status: serving.status, reason: serving.reason ?? "", message: serving.message ?? "" },
          }
        : {}),
      ports: (svc.spec?.ports ?? []).map(
        (p) => `${p.port}/${p.protocol ?? "TCP"}${p.nodePort ? `:${p.nodePort}` : ""}`,
      ),
      cloud,
      ...(hint ? { hint } : {}),
    });
  }
  if (printer.structured) {
    printer.data(opts.name ? rows[0] : rows);
    return 0;
  }
  if (!rows.length) {
    printer.line(opts.name ? `no Service ${opts.name}` : "no Portico Services");
    return opts.name ? 1 : 0;
  }
  for (const r of rows) {
    const health = r.ready === "True" ? "ok" : r.ready === "False" ? "bad" : "warn";
    const traffic = r.serving
      ? (({ True: "ok", False: "bad" }[r.serving.status] ?? "warn") as "ok" | "bad" | "warn")
      : undefined;
    printer.line(
      `${printer.paint(r.service, "bold")}  ${r.provider}  ${r.addresses.join(", ") || "<pending>"}  ${printer.paint(r.reason, health)}${r.serving ? `  ${printer.paint(r.serving.reason, traffic)}` : ""}`,
    );
    const details: InspectNode[] = [{ label: `ports ${r.ports.join(", ")}` }];
    if (r.ready !== "True" || printer.format === "wide") details.push({ label: r.message, health });
    if (r.serving && (r.serving.status !== "True" || printer.format === "wide"))
      details.push({ label: `traffic: ${r.serving.message}`, health: traffic });
    // The hint is a neutral line: the Service may be fine; porticoctl just cannot see its cloud side.
    printer.tree([...details, ...r.cloud, ...(r.hint ? [{ label: r.hint }] : [])]);
  }
  return rows.every((r) => r.ready === "True" && r.serving?.status !== "False") ? 0 : 1;
}

async function listServices(core: CoreV1Api, opts: StatusOptions): Promise<V1Service[]> {
  if (opts.name) {
    const svc = await core
      .readNamespacedService({ name: opts.name, namespace: opts.namespace ?? "default" })
      .catch((e: { code?: number }) => {
        if (e.code === 404) return undefined;
        throw e;
      });
    return svc ? [svc] : [];
  }
  const list =
    opts.allNamespaces || !opts.namespace
      ? await core.listServiceForAllNamespaces()
      : await core.listNamespacedService({ namespace: opts.namespace });
  return list.items
    .filter((s) => s.spec?.type === "LoadBalancer" && isPortico(s))
    .sort((a, b) => key(a).localeCompare(key(b)));
}
