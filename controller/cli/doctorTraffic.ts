// The doctor's checks of the path traffic takes inside the cluster — target nodes, selector and endpoints,
// kube-proxy's health checks — judged the way the controller judges them: its node selector, the Service's
// target-node labels, exclusion labels and taints, and for `Local` which target nodes hold a ready endpoint.
import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from "@kubernetes/client-node";
import { CORDONED, eligibleNodes, ineligibility } from "../../shared/nodeEligibility.ts";
import { TARGET_NODE_LABEL_ANNOTATIONS } from "../intent.ts";
import { parseLabelSelector, type LabelMatcher } from "../../shared/labelSelector.ts";
import type { Finding } from "./finding.ts";

interface Selector {
  /** How to name it to the user, e.g. `the controller's --node-selector "pool=edge"`. */
  name: string;
  matches: LabelMatcher;
}

/**
 * Where the controller sends the Service's traffic, as its provider decides it (the provider's own settings code),
 * never guessed here: to nodes (`instance`, also bare metal's announcing nodes) or to pods (`ip`); or the refusal
 * the provider gives the Service; or why it could not be asked.
 */
export type TargetJudgement =
  { type: "instance" | "ip" } | { refused: { message: string; fix: string } } | { unknown: string };

export interface TrafficInputs {
  svc: V1Service;
  targets: TargetJudgement;
  nodes: readonly V1Node[];
  slices: readonly V1EndpointSlice[];
  pods: readonly V1Pod[];
  /** The serving controller's --node-selector, when known. */
  nodeSelector?: string;
}

export function trafficChecks(input: TrafficInputs): Finding[] {
  // A refused Service has no load balancer and no targets: nothing may be said of a path its traffic takes.
  if ("refused" in input.targets)
    return [
      {
        check: "targets",
        result: "bad",
        detail: `none: the provider refuses the Service (${input.targets.refused.message})`,
        fix: input.targets.refused.fix || "change the field named above",
      },
      ...endpointChecks(input),
    ];
  const selectors = nodeSelectors(input);
  if (!Array.isArray(selectors)) return [selectors, ...endpointChecks(input)];
  const policy = input.svc.spec?.externalTrafficPolicy === "Local" ? "Local" : "Cluster";
  const kept = new Set(
    eligibleNodes(
      input.nodes,
      selectors.map((s) => s.matches),
      policy,
    ),
  );
  const why = input.nodes.map(
    (n) => [n.metadata!.name!, kept.has(n) ? undefined : whyNot(n, selectors)] as const,
  );
  const targets = new Set(why.filter(([, reason]) => !reason).map(([name]) => name));
  // Nodes outside the controller's own --node-selector are never this Service's: counted, not listed, so the
  // nodes its own settings leave out are the ones named.
  const outside = why.filter(([, reason]) => reason?.includes("the controller's --node-selector")).length;
  const left = why
    .filter(([, reason]) => reason && !reason.includes("the controller's --node-selector"))
    .map(([name, reason]) => `${name} (${reason})`);
  if (outside)
    left.push(`${outside} node(s) outside the controller's --node-selector "${input.nodeSelector}"`);
  return [nodeCheck(input, targets, left), ...endpointChecks(input), healthCheck(input, targets)];
}

/** ip targets: the load balancer sends to pods directly, so nodes and kube-proxy's health checks do not matter. */
const ipTargets = (targets: TargetJudgement) => "type" in targets && targets.type === "ip";

function nodeSelectors(input: TrafficInputs): Selector[] | Finding {
  const out: Selector[] = [];
  const parse = (text: string, name: string, fix: string): Finding | undefined => {
    try {
      out.push({ name, matches: parseLabelSelector(text) });
      return undefined;
    } catch (err) {
      return { check: "nodes", result: "bad", detail: `${name}: ${(err as Error).message}`, fix };
    }
  };
  if (input.nodeSelector) {
    const bad = parse(
      input.nodeSelector,
      `the controller's --node-selector "${input.nodeSelector}"`,
      "fix the controller's --node-selector",
    );
    if (bad) return bad;
  }
  for (const annotation of TARGET_NODE_LABEL_ANNOTATIONS) {
    const value = input.svc.metadata?.annotations?.[annotation];
    if (!value) continue;
    const bad = parse(value, `${annotation} "${value}"`, `write a label selector in ${annotation}`);
    if (bad) return bad;
  }
  return out;
}

/** Why a node the controller leaves out is left out, naming the selector that misses it. */
function whyNot(node: V1Node, selectors: readonly Selector[]): string | undefined {
  const base = ineligibility(node);
  if (base && base !== CORDONED) return base;
  const labels = node.metadata?.labels ?? {};
  const missed = selectors.find((s) => !s.matches(labels));
  return missed ? `not matched by ${missed.name}` : base;
}

function nodeCheck(input: TrafficInputs, targets: Set<string>, left: string[]): Finding {
  const leftOut = left.length
    ? `; left out: ${left.slice(0, 5).join(", ")}${left.length > 5 ? ", ..." : ""}`
    : "";
  if (ipTargets(input.targets))
    return {
      check: "nodes",
      result: "ok",
      detail: `ip targets: traffic goes to the pods; ${targets.size} of ${input.nodes.length} nodes would be targets${leftOut}`,
    };
  if (targets.size === 0)
    return {
      check: "nodes",
      result: "bad",
      detail: `no node can take traffic${leftOut}`,
      fix: left.some((l) => l.includes("not matched by"))
        ? "label nodes to match the selector named above, or change the selector"
        : "make nodes Ready, or remove the exclude label / autoscaler taint",
    };
  return {
    check: "nodes",
    result: "ok",
    detail: `${targets.size} of ${input.nodes.length} nodes are targets${leftOut}`,
  };
}

function endpointChecks({ svc, pods, slices }: TrafficInputs): Finding[] {
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
  return [
    {
      check: "selector",
      result: "ok",
      detail: `selector ${text} matches ${matching.length} pods, ${readyPods.length} Ready`,
    },
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
  ];
}

function healthCheck({ svc, slices, targets: judged }: TrafficInputs, targets: Set<string>): Finding {
  if ("unknown" in judged)
    return { check: "health checks", result: "warn", detail: `not judged: ${judged.unknown}` };
  if (ipTargets(judged))
    return {
      check: "health checks",
      result: "ok",
      detail: "ip targets: the pods themselves are health-checked",
    };
  if (svc.spec?.externalTrafficPolicy !== "Local")
    return {
      check: "health checks",
      result: "ok",
      detail: "externalTrafficPolicy Cluster: every target node forwards traffic",
    };
  const port = svc.spec.healthCheckNodePort;
  const withEndpoint = new Set(
    slices
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false && e.nodeName)
      .map((e) => e.nodeName!),
  );
  const passing = [...targets].filter((n) => withEndpoint.has(n));
  if (passing.length)
    return {
      check: "health checks",
      result: "ok",
      detail: `externalTrafficPolicy Local: ${passing.length} target node(s) have a ready local endpoint and pass /healthz on port ${port}`,
    };
  const elsewhere = [...withEndpoint].filter((n) => !targets.has(n));
  return {
    check: "health checks",
    result: "bad",
    detail: elsewhere.length
      ? `externalTrafficPolicy Local: the ready endpoints run on ${elsewhere.slice(0, 5).join(", ")}, which are not targets, so every target fails /healthz on port ${port}`
      : `externalTrafficPolicy Local: no target node has a ready endpoint, so every target fails /healthz on port ${port}`,
    fix: elsewhere.length
      ? "schedule the pods onto target nodes (a nodeSelector or affinity matching the target-node selectors), widen the selectors, or use externalTrafficPolicy: Cluster"
      : "run ready pods on target nodes, or use externalTrafficPolicy: Cluster",
  };
}
