// The health-check annotations (healthcheck-*), parsed as the AWS Load Balancer Controller reads them: overrides
// of the health check a target group gets by the behaviour table (healthCheckDefaults.ts).
import { invalidAnnotation as fail, oneOf, wholeNumber as int } from "../../annotationValues.ts";
import { AWS_ANNOTATION_KEYS as a } from "./catalog.ts";

export interface HealthCheckOverrides {
  protocol?: "TCP" | "HTTP" | "HTTPS";
  /** A number, "traffic-port", or a Service port's name (resolved to its node port or target port). */
  port?: number | string;
  path?: string;
  intervalSeconds?: number;
  timeoutSeconds?: number;
  healthyThreshold?: number;
  unhealthyThreshold?: number;
  successCodes?: string;
}

export function parseHealthCheck(get: (key: string) => string | undefined): HealthCheckOverrides {
  const hc: HealthCheckOverrides = {};
  const protocol = get(a.healthCheckProtocol);
  if (protocol)
    hc.protocol = oneOf(a.healthCheckProtocol, protocol.toUpperCase(), ["TCP", "HTTP", "HTTPS"] as const);
  const port = get(a.healthCheckPort);
  if (port) {
    if (/^\d+$/.test(port)) hc.port = int(a.healthCheckPort, port, 1, 65535);
    else if (port === "traffic-port" || /^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/.test(port)) hc.port = port;
    else
      fail(
        a.healthCheckPort,
        `"${port}" is not a port`,
        "give a number, traffic-port, or the name of a Service port",
      );
  }
  const path = get(a.healthCheckPath);
  if (path) {
    if (!path.startsWith("/"))
      fail(a.healthCheckPath, `"${path}" is not a path`, 'start it with "/", e.g. "/healthz"');
    hc.path = path;
  }
  const interval = get(a.healthCheckInterval);
  if (interval) hc.intervalSeconds = int(a.healthCheckInterval, interval, 5, 300);
  const timeout = get(a.healthCheckTimeout);
  if (timeout) hc.timeoutSeconds = int(a.healthCheckTimeout, timeout, 2, 120);
  const healthy = get(a.healthyThreshold);
  if (healthy) hc.healthyThreshold = int(a.healthyThreshold, healthy, 2, 10);
  const unhealthy = get(a.unhealthyThreshold);
  if (unhealthy) hc.unhealthyThreshold = int(a.unhealthyThreshold, unhealthy, 2, 10);
  const codes = get(a.healthCheckSuccessCodes);
  if (codes) {
    if (!/^\d{3}(-\d{3})?(,\d{3}(-\d{3})?)*$/.test(codes))
      fail(
        a.healthCheckSuccessCodes,
        `"${codes}" is not a list of HTTP codes`,
        'write e.g. "200" or "200-399"',
      );
    // ELBv2 takes an NLB's codes from 200 to 599, each range low to high; a reversed one matches nothing.
    for (const part of codes.split(",")) {
      const [low, high = low] = part.split("-").map(Number) as [number, number?];
      if (low < 200 || high > 599 || low > high)
        fail(
          a.healthCheckSuccessCodes,
          low > high
            ? `"${part}" is a reversed range, which no status code is in`
            : `"${part}" is outside 200-599, the codes an NLB's health check accepts`,
          low > high ? `write it low to high, "${high}-${low}"` : 'use codes from 200 to 599, e.g. "200-399"',
        );
    }
    hc.successCodes = codes;
  }
  return hc;
}
