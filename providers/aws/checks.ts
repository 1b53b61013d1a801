// Everything about a Service that can be refused without asking the cloud: its settings together (the combinations
// table), the number of listeners, the ports its per-port annotations name, the attribute values its ports'
// protocols rule out, and the inbound rules its NLB's own group would need. Pure; a pass runs it before its first
// read, and `porticoctl plan` and doctor refuse the same way.
import { ConfigurationError } from "../errors.ts";
import type { LoadBalancerIntent } from "../provider.ts";
import { assertNoCombination } from "../annotationKeys/combinations.ts";
import type { AwsServiceSettings } from "./annotations/settings.ts";
import { AWS_COMBINATIONS } from "./annotations/combinations.ts";
import { checkAttributesByProtocol } from "./listeners/attributesByProtocol.ts";
import { groupPorts, protocolsOf, type PortGroup } from "./listeners/desired.ts";
import { checkPortSettings, checkTlsPorts } from "./listeners/portSettings.ts";
import { ownGroupIngress } from "./securityGroups/choice.ts";
import { checkOwnGroupRules } from "./securityGroups/ruleLimit.ts";

export const LISTENERS_PER_LOAD_BALANCER = 50;

/**
 * The Service's listeners, once everything the Service alone can be refused for is checked (prefix lists are
 * weighed once read, in build.ts). The listeners it returns are the NLB's.
 */
export function checkIntent(intent: LoadBalancerIntent, settings: AwsServiceSettings): PortGroup[] {
  const groups = checkSettings(intent, settings);
  if (groups.length > LISTENERS_PER_LOAD_BALANCER) {
    throw new ConfigurationError(
      "TooManyListeners",
      "spec.ports",
      `${groups.length} listeners are needed and an NLB allows ${LISTENERS_PER_LOAD_BALANCER}`,
      "split the ports over several Services",
    );
  }
  checkPortSettings(
    settings,
    groups.map((g) => g.ports[0]!.port),
  );
  checkTlsPorts(settings, intent.ports);
  checkAttributesByProtocol(
    settings,
    groups.map((g) => ({ port: g.ports[0]!.port, protocol: protocolsOf(settings, g).tgProtocol })),
  );
  const ingress = ownGroupIngress(
    settings,
    intent,
    groups.map((g) => ({ port: g.ports[0]!.port, protocol: g.protocol })),
  );
  if (ingress) checkOwnGroupRules(intent, ingress, settings.rulesPerSecurityGroup);
  return groups;
}

/**
 * The Service's listeners, once its settings are known to work together (the combinations table): what ensure, plan
 * and doctor all refuse, before anything is derived from the settings.
 */
export function checkSettings(intent: LoadBalancerIntent, settings: AwsServiceSettings): PortGroup[] {
  const groups = groupPorts(intent.ports);
  assertNoCombination(AWS_COMBINATIONS, {
    intent,
    settings,
    listeners: groups.map((g) => ({
      port: g.ports[0]!.port,
      protocol: g.protocol,
      names: g.ports.map((p) => p.name),
    })),
  });
  return groups;
}
