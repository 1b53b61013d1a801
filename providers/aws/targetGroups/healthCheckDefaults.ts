// Which health check a target group gets before the annotations' overrides, by the behaviour table in docs/architecture.md:
// kube-proxy's HTTP answer where it must decide (a `Local` Service's healthCheckNodePort; its drain-aware
// `:10256/healthz` when asked, or for a UDP node port, which cannot answer a TCP check), a TCP check on the traffic
// port otherwise. Shared by the desired state and the check of settings that only apply to HTTP checks.
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { GroupProtocol } from "../model.ts";

export const KUBE_PROXY_HEALTH_PORT = 10256;

/** The port kube-proxy answers the default HTTP check on, or undefined when the default is a TCP check. */
export function defaultHttpCheckPort(
  intent: LoadBalancerIntent,
  settings: Pick<AwsServiceSettings, "targetType" | "kubeProxyHealthCheck">,
  protocol: GroupProtocol,
): number | undefined {
  if (settings.targetType !== "instance") return undefined;
  if (intent.externalTrafficPolicy === "Local" && intent.healthCheckNodePort)
    return intent.healthCheckNodePort;
  if (settings.kubeProxyHealthCheck || protocol === "UDP") return KUBE_PROXY_HEALTH_PORT;
  return undefined;
}

/** Whether the health check of a target group of this protocol is HTTP(S), the annotations' protocol included. */
export function checksOverHttp(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  protocol: GroupProtocol,
): boolean {
  const chosen = settings.healthCheck.protocol;
  if (chosen) return chosen !== "TCP";
  return defaultHttpCheckPort(intent, settings, protocol) !== undefined;
}
