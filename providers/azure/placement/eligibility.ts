// Which of the configured Standard load balancers (lbConfigurations.ts) a Service may go on, in the order they
// are tried: cloud-provider-azure's eligibility (the annotation naming allowed ones, allowServicePlacement, the
// Service and namespace label selectors, and a load balancer without selectors only for Services no selector
// matched), then the one the Service is on if it is still eligible (a Service never moves unless its
// annotation, labels or the configuration ask it to), otherwise the fewest rules first. Pure, so unit-tested
// case by case; the provider tries the candidates in order against Azure's limits (limits/limits.ts).
import { AZURE_ANNOTATION_KEYS } from "../annotations/catalog.ts";
import { ConfigurationError } from "../../errors.ts";
import { configField } from "../annotations/fields.ts";
import { matchesLabelSelector, type Labels } from "../../../shared/labelSelector.ts";
import type { LoadBalancerConfiguration } from "./lbConfigurations.ts";

export const CONFIGURATIONS_ANNOTATION = AZURE_ANNOTATION_KEYS.configurations;
const FIELD = `metadata.annotations[${CONFIGURATIONS_ANNOTATION}]`;

export interface PlacementInput {
  configurations: readonly LoadBalancerConfiguration[];
  /** The annotation's value, if the Service has it: configuration names, comma-separated. */
  requested?: string | undefined;
  serviceLabels: Labels;
  namespaceLabels: Labels;
  /** The configuration whose load balancer holds the Service now, if one does. */
  current?: string | undefined;
  /** Load-balancing rules on each configuration's load balancer of the Service's kind, by lower-cased name;
   * absent: that load balancer does not exist yet. */
  rules: ReadonlyMap<string, number>;
}

export interface Placement {
  /** Configuration names to try, best first. */
  candidates: string[];
  /** Whether the only candidate is where the Service already is. */
  staying: boolean;
}

export function placeService(input: PlacementInput): Placement {
  const { configurations: all, current } = input;
  const named = requestedNames(input.requested, all);
  const isCurrent = (c: LoadBalancerConfiguration) => c.name.toLowerCase() === current?.toLowerCase();
  const excluded: string[] = [];
  let selectorMatched = false;
  const eligible = (named ?? all).filter((c) => {
    // Upstream's flag keeps new Services off; AKS documents that naming the load balancer still places on it.
    if (c.allowServicePlacement === false && !named && !isCurrent(c)) {
      excluded.push(`${c.name} (allowServicePlacement is false)`);
      return false;
    }
    if (c.serviceLabelSelector && !matchesLabelSelector(c.serviceLabelSelector, input.serviceLabels)) {
      excluded.push(`${c.name} (serviceLabelSelector does not match the Service's labels)`);
      return false;
    }
    if (
      c.serviceNamespaceSelector &&
      !matchesLabelSelector(c.serviceNamespaceSelector, input.namespaceLabels)
    ) {
      excluded.push(`${c.name} (serviceNamespaceSelector does not match the namespace's labels)`);
      return false;
    }
    // Only a load balancer whose selectors all match has chosen the Service (upstream counts one that matched
    // its label selector and then failed its namespace selector, which left such Services nowhere to go).
    if (c.serviceLabelSelector || c.serviceNamespaceSelector) selectorMatched = true;
    return true;
  });
  // A load balancer whose selectors chose the Service is meant for it; those without selectors take the rest.
  const chosen = selectorMatched
    ? eligible.filter((c) => c.serviceLabelSelector || c.serviceNamespaceSelector)
    : eligible;
  if (!chosen.length)
    throw new ConfigurationError(
      "NoEligibleLoadBalancer",
      // Not named by the Service: the configurations' own rules and selectors left it nowhere.
      named ? FIELD : configField("multipleStandardLoadBalancerConfigurations"),
      `no configured load balancer may hold the Service: ${excluded.join(", ")}`,
      named
        ? `name a load balancer whose selectors match the Service in ${CONFIGURATIONS_ANNOTATION}, or change its labels`
        : "label the Service or its namespace to match a load balancer's selectors, or add a configuration " +
            "that admits it to multipleStandardLoadBalancerConfigurations",
    );
  const here = chosen.find(isCurrent);
  if (here) return { candidates: [here.name], staying: true };
  const order = all.map((c) => c.name.toLowerCase());
  const key = (c: LoadBalancerConfiguration) => input.rules.get(c.name.toLowerCase());
  const ranked = [...chosen].sort(
    (a, b) =>
      (key(a) ?? 0) - (key(b) ?? 0) ||
      // An existing empty load balancer before making another, as upstream prefers.
      Number(key(a) === undefined) - Number(key(b) === undefined) ||
      order.indexOf(a.name.toLowerCase()) - order.indexOf(b.name.toLowerCase()),
  );
  return { candidates: ranked.map((c) => c.name), staying: false };
}

/** The annotation's names as configurations (in the configuration's order); undefined without the annotation. */
function requestedNames(
  value: string | undefined,
  all: readonly LoadBalancerConfiguration[],
): LoadBalancerConfiguration[] | undefined {
  const names = (value ?? "")
    .split(",")
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  if (!names.length) return undefined;
  const unknown = names.filter((n) => !all.some((c) => c.name.toLowerCase() === n));
  if (unknown.length)
    throw new ConfigurationError(
      "UnknownLoadBalancerConfiguration",
      FIELD,
      all.length
        ? `${unknown.join(", ")} ${unknown.length === 1 ? "is not a" : "are not"} configured load balancer${unknown.length === 1 ? "" : "s"}`
        : "the controller has no multipleStandardLoadBalancerConfigurations, so there is nothing to choose among",
      all.length
        ? `name some of ${all.map((c) => c.name).join(", ")}, or remove the annotation`
        : "remove the annotation, or configure multipleStandardLoadBalancerConfigurations in the controller's Azure config",
    );
  return all.filter((c) => names.includes(c.name.toLowerCase()));
}
