// `porticoctl doctor ns/name`: why a Service has no external address, or why traffic cannot reach it. The
// chain is checked in order — Service, class and controller, last reconcile, provider and credentials, nodes,
// selector and endpoints, health checks, cloud targets — and each finding comes with its fix.
import type {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  V1Service,
} from "@kubernetes/client-node";
import { FINALIZER, MANAGED_BY_ANNOTATION, METAL_LOAD_BALANCER_CLASS } from "../../providers/classes.ts";
import { bgpFindings } from "./doctorBgp.ts";
import { CloudError, ConfigurationError } from "../../providers/errors.ts";
import type { InspectNode } from "../../providers/provider.ts";
import { buildIntent, SERVICE_NAME_LABEL } from "../intent.ts";
import { parseLabelSelector } from "../../shared/labelSelector.ts";
import { READY_CONDITION, SERVING_CONDITION } from "../status.ts";
import { controllerFor, runningControllers, toolAccess, type RunningController } from "./controllers.ts";
import { judgeTargets } from "./doctorTargets.ts";
import { trafficChecks } from "./doctorTraffic.ts";
import type { Finding } from "./finding.ts";
import type { Printer } from "./render.ts";
import { classOf, PORTICO_CLASSES, providerOf } from "./serviceClass.ts";
import { inspectionHint, inspectorFor, providerForClass, type ToolAccess } from "../../providers/registry.ts";

export type { Finding } from "./finding.ts";

export interface DoctorClients {
  core: CoreV1Api;
  discovery: DiscoveryV1Api;
  coordination: CoordinationV1Api;
  /** For the BGP mode's peers and records (bare metal); without it they are not looked at. */
  custom?: CustomObjectsApi;
}

export interface DoctorOptions {
  /** From --cluster-name; otherwise the serving controller's published one is used. */
  clusterName?: string;
  controllerNamespace: string;
  access?: ToolAccess;
}

export async function doctor(
  api: DoctorClients,
  printer: Printer,
  ref: { namespace: string; name: string },
  opts: DoctorOptions,
): Promise<number> {
  const findings = await diagnose(api, ref, opts);
  if (printer.structured) printer.data(findings);
  else {
    for (const f of findings) {
      const mark = { ok: "✓", warn: "!", bad: "✗" }[f.result];
      printer.line(`${printer.paint(mark, f.result)} ${printer.paint(f.check, "bold")}: ${f.detail}`);
      if (f.fix) printer.line(`    fix: ${f.fix}`);
    }
  }
  return findings.some((f) => f.result === "bad") ? 1 : 0;
}

export async function diagnose(
  api: DoctorClients,
  ref: { namespace: string; name: string },
  opts: DoctorOptions,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const svc = await api.core
    .readNamespacedService(ref)
    .catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e as Error)));
  if (!svc)
    return [
      {
        check: "Service",
        result: "bad",
        detail: `${ref.namespace}/${ref.name} does not exist`,
        fix: "check the name and namespace (-n)",
      },
    ];
  if (svc.spec?.type !== "LoadBalancer") {
    return [
      {
        check: "Service",
        result: "bad",
        detail: `type is ${svc.spec?.type ?? "ClusterIP"}, so no load balancer is made`,
        fix: "set spec.type: LoadBalancer",
      },
    ];
  }
  findings.push({
    check: "Service",
    result: "ok",
    detail: `type LoadBalancer, ports ${(svc.spec.ports ?? []).map((p) => `${p.port}/${p.protocol ?? "TCP"}`).join(", ")}`,
  });
  const controllers = await runningControllers(api.coordination, opts.controllerNamespace);
  const serving = controllerFor(svc, controllers);
  findings.push(...classAndController(svc, controllers, serving, opts.controllerNamespace));
  findings.push(lastReconcile(svc));
  const traffic = servingFinding(svc);
  if (traffic) findings.push(traffic);
  if (api.custom && classOf(svc) === METAL_LOAD_BALANCER_CLASS)
    findings.push(...(await bgpFindings(api.custom, svc)));
  const [nodes, slices, pods] = await Promise.all([
    api.core.listNode(),
    api.discovery.listNamespacedEndpointSlice({
      namespace: ref.namespace,
      labelSelector: `${SERVICE_NAME_LABEL}=${ref.name}`,
    }),
    svc.spec.selector
      ? api.core.listNamespacedPod({ namespace: ref.namespace })
      : Promise.resolve({ items: [] }),
  ]);
  const settings = serving?.settings;
  const clusterName = opts.clusterName || settings?.clusterName;
  const access = toolAccess(opts.access, settings);
  findings.push(
    ...(await providerCheck(svc, nodes.items, slices.items, {
      clusterName,
      access,
      ...(settings?.nodeSelector ? { nodeSelector: settings.nodeSelector } : {}),
    })),
  );
  findings.push(
    ...trafficChecks({
      svc,
      targets: await judgeTargets(svc, nodes.items, slices.items, {
        clusterName,
        access,
        ...(settings?.nodeSelector ? { nodeSelector: settings.nodeSelector } : {}),
      }),
      nodes: nodes.items,
      slices: slices.items,
      pods: pods.items,
      ...(settings?.nodeSelector ? { nodeSelector: settings.nodeSelector } : {}),
    }),
  );
  return findings;
}

function classAndController(
  svc: V1Service,
  controllers: readonly RunningController[],
  serving: RunningController | undefined,
  controllerNamespace: string,
): Finding[] {
  const cls = classOf(svc);
  const provider = providerOf(svc);
  const out: Finding[] = [];
  if (cls && !provider) {
    return [
      {
        check: "class",
        result: "bad",
        detail: `loadBalancerClass ${cls} is not one of Portico's (${Object.keys(PORTICO_CLASSES).join(", ")})`,
        fix: "another controller owns this class; check that one, or use a Portico class",
      },
    ];
  }
  out.push({
    check: "class",
    result: "ok",
    detail: cls
      ? `${cls} (${provider})`
      : "no class: served only if a Portico controller runs with --default-load-balancer",
  });
  const fresh = controllers.filter((c) => c.fresh);
  const claimed =
    svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] !== undefined &&
    svc.metadata?.finalizers?.includes(FINALIZER);
  const where = (c: RunningController) => `${c.lease.metadata!.namespace}/${c.lease.metadata!.name}`;
  const by = serving
    ? `; served by ${where(serving)} (cluster ${serving.settings!.clusterName}${serving.settings!.nodeSelector ? `, --node-selector ${serving.settings!.nodeSelector}` : ""})`
    : "";
  if (claimed)
    out.push({
      check: "controller",
      result: "ok",
      detail: `a Portico controller took the Service on (${svc.metadata!.annotations![MANAGED_BY_ANNOTATION]})${by}`,
    });
  else {
    out.push({
      check: "controller",
      result: "bad",
      detail: fresh.length
        ? `controllers are leading (${fresh.map(where).join(", ")}) but none took this Service on`
        : "no Portico controller holds a fresh leader Lease",
      fix: fresh.length
        ? "check the controller's --load-balancer-class, --default-load-balancer and --namespace, and its logs"
        : `deploy the controller (kubectl apply -k manifests/overlays/<eks|aks|metal>) and check its pods in ${controllerNamespace}`,
    });
  }
  return out;
}

/** What the controller last saw of traffic reaching backends (the Serving condition), when a provider reports it. */
function servingFinding(svc: V1Service): Finding | undefined {
  const c = svc.status?.conditions?.find((x) => x.type === SERVING_CONDITION);
  if (!c) return undefined;
  const detail = `${c.reason}: ${c.message}`;
  if (c.status === "True") return { check: "traffic", result: "ok", detail };
  if (c.status === "Unknown") return { check: "traffic", result: "warn", detail };
  return {
    check: "traffic",
    result: "bad",
    detail,
    fix: "the node, endpoint and health-check findings below say why no backend takes the traffic",
  };
}

function lastReconcile(svc: V1Service): Finding {
  const c = svc.status?.conditions?.find((x) => x.type === READY_CONDITION);
  if (!c)
    return {
      check: "last reconcile",
      result: "warn",
      detail: "Portico has not reported on this Service yet",
    };
  if (c.status === "True") return { check: "last reconcile", result: "ok", detail: c.message };
  return {
    check: "last reconcile",
    result: "bad",
    detail: `${c.reason}: ${c.message}`,
    fix: reconcileFix(c.reason),
  };
}

/** What to do about a failed reconcile depends on who must act: the user, the cloud's owner, or nobody. */
function reconcileFix(reason: string | undefined): string {
  switch (reason) {
    case "CloudUnavailable":
      return "the cloud API did not answer or throttled the controller; it retries on its own with backoff — check the controller's network path to the cloud endpoint if this lasts";
    case "CloudRejected":
      return "the cloud refused the request: see its message above (permissions, quotas or a resource someone else changed); the controller retries every few minutes";
    default:
      return "change the field named above; the controller retries on its own once it is fixed";
  }
}

async function providerCheck(
  svc: V1Service,
  nodes: Parameters<typeof buildIntent>[1],
  slices: Parameters<typeof buildIntent>[2],
  where: { clusterName: string | undefined; access: ToolAccess; nodeSelector?: string },
): Promise<Finding[]> {
  const cls = classOf(svc);
  // Inspection finds the Service's resources by its UID tag; only the plan needs the cluster name (names,
  // subnet discovery), and a guessed one would report differences that are not there.
  const { clusterName, access } = where;
  const inspector = await inspectorFor(cls, clusterName ?? "", access);
  const hint = inspectionHint(cls, access);
  if (!inspector && hint) return [{ check: "provider", result: "warn", detail: `not checked: ${hint}` }];
  if (!inspector || !cls) return [];
  try {
    const out: Finding[] = [];
    if (clusterName) {
      // The intent the controller builds: its node selector decides the targets as much as the Service does.
      const nodeSelector = where.nodeSelector ? parseLabelSelector(where.nodeSelector) : undefined;
      const plan = await inspector.plan(
        buildIntent(svc, nodes, slices, cls, nodeSelector ? { nodeSelector } : {}),
      );
      out.push({
        check: "provider",
        result: plan.operations.length ? "warn" : "ok",
        detail: plan.operations.length
          ? `the cloud differs from what the Service asks: ${plan.operations.join("; ")}`
          : "credentials work and the cloud matches the Service",
        ...(plan.operations.length
          ? {
              fix:
                "the controller restores security rules within its --security-rule-check-period (60 s by default) " +
                "and converges on the rest at its next resync (--resync-period; on AWS, listeners and attributes " +
                "within --aws-full-observation-period); if it does not, see the last reconcile above",
            }
          : {}),
      });
    } else {
      out.push({
        check: "provider",
        result: "warn",
        detail:
          "the cloud was not compared with the Service: no running controller publishes its cluster name (leader election off, or its Lease not readable)",
        fix: "give --cluster-name (the controller's --cluster-name)",
      });
    }
    const tree = inspector.inspect
      ? await inspector.inspect({
          namespace: svc.metadata!.namespace!,
          name: svc.metadata!.name!,
          uid: svc.metadata!.uid!,
        })
      : [];
    const targets = flatten(tree).filter((n) => /^(i-|\d)/.test(n.label));
    const healthy = targets.filter((n) => n.health === "ok").length;
    if (targets.length) {
      out.push({
        check: "cloud targets",
        result: healthy ? "ok" : "bad",
        detail: `${healthy} of ${targets.length} targets healthy`,
        ...(healthy ? {} : { fix: "see the node and endpoint checks: no target passes its health check" }),
      });
    }
    out.push(...cloudProblems(tree, targets));
    return out;
  } catch (err) {
    if (err instanceof ConfigurationError)
      return [{ check: "provider", result: "bad", detail: err.message, fix: err.fix }];
    if (err instanceof CloudError)
      return [
        {
          check: "provider",
          result: "bad",
          detail: err.message,
          fix: cloudErrorFix(cls, err.message),
        },
      ];
    throw err;
  }
}

/** The provider's own fix for an error reading its cloud: permissions when access was denied. */
function cloudErrorFix(cls: string, message: string): string {
  const denied = /AccessDenied|AuthorizationFailed|Unauthorized|credentials/i.test(message);
  return providerForClass(cls)?.cloudErrorFix?.(denied) ?? "see the error above";
}

/** What the cloud picture itself shows wrong beyond target health: a rule without a probe, an empty pool, nothing found. */
function cloudProblems(tree: InspectNode[], targets: InspectNode[]): Finding[] {
  if (!tree.length) return [];
  const problems = flatten(tree).filter(
    (n) => !targets.includes(n) && (n.health === "warn" || n.health === "bad"),
  );
  if (!problems.length)
    return [
      {
        check: "cloud",
        result: "ok",
        detail: "the cloud resources found hold nothing wrong (status shows them)",
      },
    ];
  return [
    {
      check: "cloud",
      result: problems.some((n) => n.health === "bad") ? "bad" : "warn",
      detail: problems.map((n) => n.label).join("; "),
      fix: "porticoctl status shows where these sit; the controller repairs what it owns on its next reconcile",
    },
  ];
}

function flatten(nodes: InspectNode[]): InspectNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);
}
