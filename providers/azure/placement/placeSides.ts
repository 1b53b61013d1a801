// A Service's sides (desired/sides.ts) on the load balancer it is placed on, checked against Azure's limits
// before anything is written. With one shared load balancer (or one per Service) that is the only place; with
// multipleStandardLoadBalancerConfigurations, the candidates eligibility.ts ranks are tried in order, each
// with its own nodes (nodePlacement.ts), and the first the Service fits on wins. A Service that fits on none
// is refused with every load balancer's reason, while nothing of it exists. Pure: a function of the intent
// and the observation, so every reconcile of an unchanged Service places it the same.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent, Notice } from "../../provider.ts";
import type { AzureServiceSettings } from "../annotations/settings.ts";
import type { AzureConfig } from "../config.ts";
import { TARGET_NODE_ANNOTATIONS } from "../desired/desired.ts";
import { configurationOf, type LoadBalancerConfiguration } from "./lbConfigurations.ts";
import { holdsService } from "../loadBalancer/loadBalancerEdit.ts";
import { assertSidesWithinLimits } from "../limits/limits.ts";
import type { DesiredService, Network, Observed } from "../model.ts";
import { frontendName, sharedLoadBalancerName } from "../names.ts";
import { nodesOf, unplacedNodes } from "./nodePlacement.ts";
import { CONFIGURATIONS_ANNOTATION, placeService } from "./eligibility.ts";
import { ownedLoadBalancer } from "../plan/plan.ts";
import { sharedFrontend } from "../publicIps/sharedFrontends.ts";
import { desiredSides } from "../desired/sides.ts";
import { annotationField, configField } from "../annotations/fields.ts";

/** Limits of one load balancer (or of the nodes behind it): another load balancer may have room. */
const PER_LOAD_BALANCER = new Set([
  "TooManyFrontends",
  "TooManyRules",
  "TooManyRulesPerBackend",
  "LoadBalancerFull",
]);

/**
 * What placed the Service among the configured load balancers: its annotation naming them, when it carries one;
 * otherwise the controller's configurations and their selectors.
 */
export function placementField(intent: LoadBalancerIntent): string {
  return intent.annotations[CONFIGURATIONS_ANNOTATION]?.trim()
    ? annotationField(CONFIGURATIONS_ANNOTATION)
    : configField("multipleStandardLoadBalancerConfigurations");
}

/** What a ConfigurationError says is wrong, without the field before it and the fix after it. */
function problemOf(err: ConfigurationError): string {
  const text = err.message.slice(err.field.length + 2);
  return err.fix && text.endsWith(`; ${err.fix}`) ? text.slice(0, -err.fix.length - 2) : text;
}

export interface PlaceContext {
  cluster: string;
  config: AzureConfig;
  network: Network;
}

export function placedSides(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  ctx: PlaceContext,
  observed: Observed,
): DesiredService[] {
  const configs = ctx.config.multipleStandardLoadBalancerConfigurations ?? [];
  if (!configs.length || ctx.config.loadBalancerPerService) {
    const sides = desiredSides(intent, settings, ctx, observed.publicIps);
    assertSidesWithinLimits(sides, observed, ctx.config.limits);
    return sides;
  }
  // Nodes a Service selects itself (its own pool) are the user's choice; the others are its load balancer's.
  const ownNodes = TARGET_NODE_ANNOTATIONS.some((a) => intent.annotations[a]);
  // Each candidate described once: the first is looked at both for sharing and for room.
  const described = new Map<string, DesiredService[]>();
  const describe = (name: string) => {
    let sides = described.get(name);
    if (!sides)
      described.set(
        name,
        (sides = desiredSides(
          { ...intent, nodes: ownNodes ? intent.nodes : nodesOf(configs, intent.nodes, name) },
          settings,
          { ...ctx, loadBalancerBase: name },
          observed.publicIps,
        )),
      );
    return sides;
  };
  let placement = placeService({
    configurations: configs,
    requested: intent.annotations[CONFIGURATIONS_ANNOTATION],
    serviceLabels: intent.serviceLabels,
    namespaceLabels: intent.namespaceLabels,
    current: currentConfiguration(configs, observed, ctx.cluster, intent.service.uid, settings.internal),
    rules: ruleCounts(configs, observed, settings.internal),
  });
  // ARM puts an address on one frontend of one load balancer: a Service sharing another's goes where it is.
  const sharing = sharingConfiguration(configs, describe(placement.candidates[0]!), observed);
  if (sharing) placement = { candidates: [sharing], staying: true };
  const where = sharing ? "where the address it shares is" : "where it is";

  const reasons: string[] = [];
  for (const name of placement.candidates) {
    const sides = describe(name);
    try {
      assertSidesWithinLimits(sides, observed, ctx.config.limits);
      return sides;
    } catch (err) {
      if (!(err instanceof ConfigurationError) || !PER_LOAD_BALANCER.has(err.reason)) throw err;
      // The one-load-balancer fixes (loadBalancerPerService, say) do not apply here; what does is said below.
      const problem = problemOf(err);
      if (placement.staying)
        throw new ConfigurationError(
          err.reason,
          placementField(intent),
          `${problem}; the Service stays on ${name}, ${where}: Services move between load balancers only when asked`,
          `name another load balancer with room in ${CONFIGURATIONS_ANNOTATION} to move it, or use fewer ports`,
        );
      reasons.push(`${name}: ${problem}`);
    }
  }
  throw new ConfigurationError(
    "NoLoadBalancerWithRoom",
    placementField(intent),
    `the Service fits on none of the load balancers it may use, within Azure's limits: ${reasons.join(" | ")}`,
    "add a load balancer to multipleStandardLoadBalancerConfigurations that the Service may use (by its " +
      `selectors, or by naming it in ${CONFIGURATIONS_ANNOTATION}), or free room on one of these`,
  );
}

/** The configuration whose load balancer holds the Service's frontend, of the Service's kind first. */
export function currentConfiguration(
  configs: readonly LoadBalancerConfiguration[],
  observed: Observed,
  cluster: string,
  uid: string,
  internal: boolean,
): string | undefined {
  const frontends = [frontendName(uid), frontendName(uid, "IPv6")];
  const holding = observed.loadBalancers.filter(
    (lb) => ownedLoadBalancer(lb, cluster) && frontends.some((fe) => holdsService(lb, fe)),
  );
  const sameKind = (name: string | undefined) =>
    (name?.toLowerCase().endsWith("-internal") ?? false) === internal;
  const lb =
    holding.find((l) => sameKind(l.name) && configurationOf(configs, l.name)) ??
    holding.find((l) => configurationOf(configs, l.name));
  return configurationOf(configs, lb?.name)?.name;
}

/** Rules on each configuration's load balancer of the kind asked, by lower-cased name; absent ones left out. */
export function ruleCounts(
  configs: readonly LoadBalancerConfiguration[],
  observed: Observed,
  internal: boolean,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of configs) {
    const name = sharedLoadBalancerName(c.name, internal).toLowerCase();
    const lb = observed.loadBalancers.find((l) => l.name?.toLowerCase() === name);
    if (lb) out.set(c.name.toLowerCase(), lb.loadBalancingRules?.length ?? 0);
  }
  return out;
}

/** The configuration whose load balancer already carries, on another Service's frontend, an address asked for. */
function sharingConfiguration(
  configs: readonly LoadBalancerConfiguration[],
  sides: DesiredService[],
  observed: Observed,
): string | undefined {
  for (const d of sides)
    for (const lb of observed.loadBalancers) {
      if (
        !ownedLoadBalancer(lb, d.cluster) ||
        (lb.name?.toLowerCase().endsWith("-internal") ?? false) !== d.loadBalancer.internal
      )
        continue;
      const c = configurationOf(configs, lb.name);
      if (c && sharedFrontend(lb, d.frontendName, d.frontend)) return c.name;
    }
  return undefined;
}

/**
 * What the user should hear about the nodes with several load balancers: eligible nodes that no configuration
 * takes, so that no load balancer sends to them (cloud-provider-azure warns of them the same way).
 */
export function placementNotices(config: AzureConfig, intent: LoadBalancerIntent): Notice[] {
  const left = unplacedNodes(config.multipleStandardLoadBalancerConfigurations ?? [], intent.nodes);
  if (!left.length || TARGET_NODE_ANNOTATIONS.some((a) => intent.annotations[a])) return [];
  const shown =
    left.length > 5 ? `${left.slice(0, 5).join(", ")} and ${left.length - 5} more` : left.join(", ");
  return [
    {
      type: "Warning",
      reason: "NodesOnNoLoadBalancer",
      message:
        `nodes ${shown} are on none of the configured load balancers (not in a primary pool, and every ` +
        "nodeSelector fails them), so they receive no traffic: give one configuration a nodeSelector that " +
        "matches them, or none",
    },
  ];
}
