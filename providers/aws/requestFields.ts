// How the plan's desired state is spelled in ELBv2 and EC2 requests: pure, so each spelling is tested alone.
import type { IpPermission } from "@aws-sdk/client-ec2";
import type { Action, Tag } from "@aws-sdk/client-elastic-load-balancing-v2";
import type { DesiredListener, HealthCheck, IngressRule, Target } from "./model.ts";

/** Targets per RegisterTargets/DeregisterTargets call. */
export const REGISTER_BATCH = 200;

export function permissions(rules: IngressRule[]): IpPermission[] {
  return rules.map((r) => ({
    IpProtocol: r.protocol,
    FromPort: r.port,
    ToPort: r.port,
    ...(r.cidr.startsWith("pl-")
      ? { PrefixListIds: [{ PrefixListId: r.cidr }] }
      : r.cidr.includes(":")
        ? { Ipv6Ranges: [{ CidrIpv6: r.cidr }] }
        : { IpRanges: [{ CidrIp: r.cidr }] }),
  }));
}

export function healthCheckFields(hc: HealthCheck) {
  return {
    HealthCheckProtocol: hc.protocol,
    HealthCheckPort: hc.port,
    HealthCheckIntervalSeconds: hc.intervalSeconds,
    HealthCheckTimeoutSeconds: hc.timeoutSeconds,
    HealthyThresholdCount: hc.healthyThreshold,
    UnhealthyThresholdCount: hc.unhealthyThreshold,
    ...(hc.protocol !== "TCP" ? { HealthCheckPath: hc.path, Matcher: { HttpCode: hc.matcher } } : {}),
  };
}

export function listenerFields(listener: DesiredListener, targetGroupArn: string) {
  const actions: Action[] = [{ Type: "forward", TargetGroupArn: targetGroupArn }];
  return {
    Protocol: listener.protocol,
    DefaultActions: actions,
    // Only the default certificate goes here; the others are added to the listener's certificate list.
    ...(listener.certificateArns.length
      ? { Certificates: [{ CertificateArn: listener.certificateArns[0] }] }
      : {}),
    ...(listener.sslPolicy ? { SslPolicy: listener.sslPolicy } : {}),
    ...(listener.protocol === "TLS" ? { AlpnPolicy: [listener.alpnPolicy ?? "None"] } : {}),
  };
}

export const tags = (t: Record<string, string>): Tag[] =>
  Object.entries(t).map(([Key, Value]) => ({ Key, Value }));
export const attributes = (a: Record<string, string>) =>
  Object.entries(a).map(([Key, Value]) => ({ Key, Value }));
export const targets = (t: Target[]) => t.map((x) => ({ Id: x.id, Port: x.port }));

export function* batches(items: Target[]): Generator<Target[]> {
  for (let i = 0; i < items.length; i += REGISTER_BATCH) yield items.slice(i, i + REGISTER_BATCH);
}
