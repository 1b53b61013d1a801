// The health check a target group gets: the behaviour table's (healthCheckDefaults.ts) with the annotations'
// overrides on top, its port resolved from a Service port's name as the AWS Load Balancer Controller resolves it.
// Pure, like targetGroups/desired.ts, which calls it.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { AWS_ANNOTATIONS, type AwsServiceSettings } from "../annotations/settings.ts";
import type { GroupProtocol, HealthCheck } from "../model.ts";
import { defaultHttpCheckPort } from "./healthCheckDefaults.ts";

/** The health check the behaviour table asks for, with the annotations' overrides on top. */
export function healthCheck(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  protocol: GroupProtocol,
): HealthCheck {
  const http = (port: number): HealthCheck => ({
    protocol: "HTTP",
    port: String(port),
    path: "/healthz",
    intervalSeconds: 10,
    timeoutSeconds: 6,
    healthyThreshold: 2,
    unhealthyThreshold: 2,
    matcher: "200-399",
  });
  const tcp: HealthCheck = {
    protocol: "TCP",
    port: "traffic-port",
    intervalSeconds: 10,
    timeoutSeconds: 10,
    healthyThreshold: 3,
    unhealthyThreshold: 3,
  };
  const httpPort = defaultHttpCheckPort(intent, settings, protocol);
  const base = httpPort === undefined ? tcp : http(httpPort);
  const o = settings.healthCheck;
  const merged: HealthCheck = {
    ...base,
    ...(o.protocol ? { protocol: o.protocol } : {}),
    ...(o.port !== undefined ? { port: healthCheckPort(intent, settings, o.port) } : {}),
    ...(o.intervalSeconds ? { intervalSeconds: o.intervalSeconds } : {}),
    ...(o.timeoutSeconds ? { timeoutSeconds: o.timeoutSeconds } : {}),
    ...(o.healthyThreshold ? { healthyThreshold: o.healthyThreshold } : {}),
    ...(o.unhealthyThreshold ? { unhealthyThreshold: o.unhealthyThreshold } : {}),
  };
  if (merged.protocol === "TCP") {
    delete merged.path;
    delete merged.matcher;
  } else {
    merged.path = o.path ?? merged.path ?? "/";
    merged.matcher = o.successCodes ?? merged.matcher ?? "200-399";
  }
  if (merged.timeoutSeconds > merged.intervalSeconds) {
    if (o.timeoutSeconds) {
      throw new ConfigurationError(
        "InvalidHealthCheck",
        `metadata.annotations[${AWS_ANNOTATIONS.healthCheckTimeout}]`,
        `a ${merged.timeoutSeconds}s timeout is longer than the ${merged.intervalSeconds}s interval (${AWS_ANNOTATIONS.healthCheckInterval}${o.intervalSeconds ? "" : ", default"})`,
        "make the timeout no longer than the interval",
      );
    }
    // Only the interval was chosen: the default timeout follows it down.
    merged.timeoutSeconds = merged.intervalSeconds;
  }
  return merged;
}

/**
 * A named health-check port is the Service port's node port (instance targets) or its target port (ip targets),
 * as the AWS Load Balancer Controller resolves it. The intent carries target ports as the endpoints resolved them.
 */
function healthCheckPort(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  port: number | string,
): string {
  if (typeof port === "number" || port === "traffic-port") return String(port);
  const field = `metadata.annotations[${AWS_ANNOTATIONS.healthCheckPort}]`;
  const servicePort = intent.ports.find((p) => p.name === port);
  if (!servicePort)
    throw new ConfigurationError(
      "InvalidHealthCheck",
      field,
      `the Service has no port named "${port}"`,
      "name one of spec.ports, or give a number",
    );
  if (settings.targetType === "instance") {
    if (!servicePort.nodePort)
      throw new ConfigurationError(
        "InvalidHealthCheck",
        field,
        `port "${port}" has no node port`,
        "give a number",
      );
    return String(servicePort.nodePort);
  }
  const targetPorts = new Set(intent.endpoints.map((e) => e.ports[port]).filter((p) => p !== undefined));
  if (targetPorts.size > 1)
    throw new ConfigurationError(
      "InvalidHealthCheck",
      field,
      `port "${port}" reaches different target ports on different pods (a named targetPort)`,
      "give the health-check port as a number",
    );
  // No endpoint yet says which port it is: probe the traffic port until one does.
  return targetPorts.size ? String([...targetPorts][0]) : "traffic-port";
}
