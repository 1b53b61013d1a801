// `porticoctl doctor ns/name`: why a Service has no external address, or why traffic cannot reach it. The
// chain is checked in order — Service, class and controller, last reconcile, provider and credentials, nodes,
// selector and endpoints, health checks, cloud targets — and each finding comes with its fix.
import type { CoordinationV1Api, CoreV1Api, DiscoveryV1Api, V1Service } from "@kubernetes/client-node";
import { CloudError, ConfigurationError } from "../../providers/errors.ts";
import type { InspectNode } from "../../providers/provider.ts";
import { FINALIZER, MANAGED_BY_ANNOTATION } from "../classes.ts";
import { ineligibility } from "../eligibility.ts";
import { buildIntent, SERVICE_NAME_LABEL } from "../intent.ts";
import { READY_CONDITION } from "../status.ts";
import type { Printer } from "./render.ts";
import { classOf, inspectionHint, inspectorFor, PORTICO_CLASSES, type CloudAccess } from "./services.ts";

export interface Finding {
  check: string;
  result: "ok" | "warn" | "bad";
  detail: string;
  fix?: string;
}

export interface DoctorClients {
  core: CoreV1Api;
  discovery: DiscoveryV1Api;
  coordination: CoordinationV1Api;
}

export async function doctor(
  api: DoctorClients,
  printer: Printer,
  ref: { namespace: string; name: string },
  opts: { clusterName: string; controllerNamespace: string; access?: CloudAccess },
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
  opts: { clusterName: string; controllerNamespace: string; access?: CloudAccess },
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
  findings.push(...(await classAndController(api, svc, opts.controllerNamespace)));
  findings.push(lastReconcile(svc));
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
  findings.push(...(await providerCheck(svc, nodes.items, slices.items, opts.clusterName, opts.access)));
  findings.push(nodeCheck(svc, nodes.items));
  findings.push(...endpointChecks(svc, pods.items, slices.items));
  findings.push(healthCheck(svc, nodes.items, slices.items));
  return findings;
}

async function classAndController(
  api: DoctorClients,
  svc: V1Service,
  controllerNamespace: string,
): Promise<Finding[]> {
  const cls = classOf(svc);
  const provider = cls ? PORTICO_CLASSES[cls] : undefined;
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
  const leases = await api.coordination
    .listNamespacedLease({ namespace: controllerNamespace })
    .catch(() => ({ items: [] }));
  const portico = leases.items.filter((l) => l.metadata?.name?.startsWith("portico-controller"));
  const fresh = portico.filter((l) => {
    const renewed = l.spec?.renewTime ? new Date(String(l.spec.renewTime)).getTime() : 0;
    return l.spec?.holderIdentity && Date.now() - renewed < (l.spec.leaseDurationSeconds ?? 15) * 2000;
  });
  const claimed =
    svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] !== undefined &&
    svc.metadata?.finalizers?.includes(FINALIZER);
  if (claimed)
    out.push({
      check: "controller",
      result: "ok",
      detail: `a Portico controller took the Service on (${svc.metadata!.annotations![MANAGED_BY_ANNOTATION]})`,
    });
  else {
    out.push({
      check: "controller",
      result: "bad",
      detail: fresh.length
        ? `controllers are leading (${fresh.map((l) => l.metadata!.name).join(", ")}) but none took this Service on`
        : `no Portico controller holds a fresh leader Lease in ${controllerNamespace}`,
      fix: fresh.length
        ? "check the controller's --load-balancer-class and --namespace, and its logs"
        : `deploy the controller (kubectl apply -k manifests/overlays/<eks|aks|metal>) and check its pods in ${controllerNamespace}`,
    });
  }
  return out;
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
    fix: "change the field named above; the controller retries on its own once it is fixed",
  };
}

async function providerCheck(
  svc: V1Service,
  nodes: Parameters<typeof buildIntent>[1],
  slices: Parameters<typeof buildIntent>[2],
  clusterName: string,
  access: CloudAccess = {},
): Promise<Finding[]> {
  const cls = classOf(svc);
  const inspector = inspectorFor(cls, clusterName, access);
  const hint = inspectionHint(cls, access);
  if (!inspector && hint) return [{ check: "provider", result: "warn", detail: `not checked: ${hint}` }];
  if (!inspector || !cls) return [];
  try {
    const intent = buildIntent(svc, nodes, slices, cls);
    const plan = await inspector.plan(intent);
    const out: Finding[] = [
      {
        check: "provider",
        result: plan.operations.length ? "warn" : "ok",
        detail: plan.operations.length
          ? `the cloud differs from what the Service asks: ${plan.operations.join("; ")}`
          : "credentials work and the cloud matches the Service",
        ...(plan.operations.length
          ? { fix: "the controller will converge; if it does not, see the last reconcile above" }
          : {}),
      },
    ];
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
          fix: cloudErrorFix(inspector.name, err.message),
        },
      ];
    throw err;
  }
}

function cloudErrorFix(provider: string, message: string): string {
  const denied = /AccessDenied|AuthorizationFailed|Unauthorized|credentials/i.test(message);
  if (provider === "azure")
    return denied
      ? "give the identity the role in manifests/azure/role-definition.json on the Azure config's resource groups"
      : "see the Azure error above";
  return denied
    ? "give the controller's identity the policy in manifests/aws/iam-policy.json"
    : "see the AWS error above";
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

function nodeCheck(svc: V1Service, nodes: Parameters<typeof buildIntent>[1]): Finding {
  const reasons = nodes.map((n) => [n.metadata!.name!, ineligibility(n)] as const);
  const eligible = reasons.filter(([, r]) => !r).length;
  const excluded = reasons.filter(([, r]) => r).map(([n, r]) => `${n} (${r})`);
  const ipTargets =
    svc.metadata?.annotations?.["service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"] === "ip";
  if (eligible === 0 && !ipTargets)
    return {
      check: "nodes",
      result: "bad",
      detail: `no node can take traffic${excluded.length ? `: ${excluded.slice(0, 5).join(", ")}` : ""}`,
      fix: "make nodes Ready, or remove the exclude label / autoscaler taint",
    };
  return {
    check: "nodes",
    result: "ok",
    detail: `${eligible} of ${nodes.length} nodes eligible${excluded.length ? `; left out: ${excluded.slice(0, 5).join(", ")}` : ""}`,
  };
}

function endpointChecks(
  svc: V1Service,
  pods: {
    metadata?: { labels?: Record<string, string>; name?: string };
    status?: { conditions?: { type: string; status: string }[] };
  }[],
  slices: Parameters<typeof buildIntent>[2],
): Finding[] {
  const selector = svc.spec?.selector;
  const ready = slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false);
  if (!selector || !Object.keys(selector).length) {
    return [
      {
        check: "endpoints",
        result: ready.length ? "ok" : "bad",
        detail: `no selector; ${ready.length} ready endpoints in hand-made EndpointSlices`,
        ...(ready.length
          ? {}
          : { fix: "add a selector, or create EndpointSlices labelled kubernetes.io/service-name" }),
      },
    ];
  }
  const text = Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const matching = pods.filter((p) =>
    Object.entries(selector).every(([k, v]) => p.metadata?.labels?.[k] === v),
  );
  if (!matching.length) {
    const near = [
      ...new Set(
        pods.map((p) =>
          Object.entries(p.metadata?.labels ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(","),
        ),
      ),
    ].slice(0, 3);
    return [
      {
        check: "selector",
        result: "bad",
        detail: `selector ${text} matches no pod${near.length ? `; pods here are labelled ${near.join(" | ")}` : " (there are no pods in the namespace)"}`,
        fix: "make spec.selector match the pods' labels (the most common cause of empty endpoints)",
      },
    ];
  }
  const readyPods = matching.filter((p) =>
    p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  const out: Finding[] = [
    {
      check: "selector",
      result: "ok",
      detail: `selector ${text} matches ${matching.length} pods, ${readyPods.length} Ready`,
    },
  ];
  out.push(
    ready.length
      ? { check: "endpoints", result: "ok", detail: `${ready.length} ready endpoints` }
      : {
          check: "endpoints",
          result: "bad",
          detail: "no ready endpoint",
          fix: readyPods.length
            ? "the EndpointSlice controller has not caught up, or the pods' ports do not match targetPort"
            : "the pods are not Ready: check their readiness probes and logs",
        },
  );
  return out;
}

function healthCheck(
  svc: V1Service,
  nodes: Parameters<typeof buildIntent>[1],
  slices: Parameters<typeof buildIntent>[2],
): Finding {
  if (svc.spec?.externalTrafficPolicy !== "Local")
    return {
      check: "health checks",
      result: "ok",
      detail: "externalTrafficPolicy Cluster: every eligible node forwards traffic",
    };
  const withEndpoint = new Set(
    slices
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false && e.nodeName)
      .map((e) => e.nodeName!),
  );
  const passing = nodes.filter((n) => !ineligibility(n) && withEndpoint.has(n.metadata!.name!)).length;
  return passing
    ? {
        check: "health checks",
        result: "ok",
        detail: `externalTrafficPolicy Local: ${passing} node(s) have a ready local endpoint and pass /healthz on port ${svc.spec.healthCheckNodePort}`,
      }
    : {
        check: "health checks",
        result: "bad",
        detail: `externalTrafficPolicy Local: no eligible node has a ready endpoint, so every node fails /healthz on port ${svc.spec.healthCheckNodePort}`,
        fix: "run ready pods on eligible nodes, or use externalTrafficPolicy: Cluster",
      };
}

function flatten(nodes: InspectNode[]): InspectNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);
}
