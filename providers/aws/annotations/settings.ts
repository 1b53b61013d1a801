// The Service annotations users already write for the AWS Load Balancer Controller, parsed and validated
// into settings. Every error names the annotation and how to fix it.
import {
  invalidAnnotation as fail,
  keyValuePairs,
  oneOf,
  optionalBool,
  splitList as list,
} from "../../annotationValues.ts";
import {
  checkAttributes,
  checkTags,
  LOAD_BALANCER_ATTRIBUTES,
  TARGET_GROUP_ATTRIBUTES,
} from "./attributeRules.ts";
import { parseHealthCheck, type HealthCheckOverrides } from "./healthCheck.ts";
import { parseListenerSettings, type ListenerSettings } from "./listeners.ts";
import { parseNetworkSettings, type NetworkSettings } from "./network.ts";
import { AWS_ANNOTATION_KEYS } from "./catalog.ts";
import { DEFAULT_RULES_PER_SECURITY_GROUP } from "../securityGroups/ruleLimit.ts";
import { PORTICO_ANNOTATIONS } from "../../annotationKeys/portico.ts";

/** Every key the AWS parsers read: the catalog's (where each is spelled once), and Portico's own. */
export const AWS_ANNOTATIONS = {
  ...AWS_ANNOTATION_KEYS,
  /** Portico's opt-in for kube-proxy's drain-aware health endpoint with `externalTrafficPolicy: Cluster`. */
  kubeProxyHealthCheck: PORTICO_ANNOTATIONS.kubeProxyHealthCheck,
} as const;

export interface AwsServiceSettings extends NetworkSettings, ListenerSettings {
  targetType: "instance" | "ip";
  scheme: "internal" | "internet-facing";
  /** Subnet IDs (`subnet-…`) or Name tags; empty: discover by role tags. */
  subnets: string[];
  name?: string;
  certificateArns: string[];
  /** Ports (numbers or names) that get TLS listeners; undefined: all, when a certificate is set. */
  sslPorts?: string[];
  sslPolicy?: string;
  backendTls: boolean;
  loadBalancerAttributes: Record<string, string>;
  targetGroupAttributes: Record<string, string>;
  additionalTags: Record<string, string>;
  ipAddressType: "ipv4" | "dualstack";
  healthCheck: HealthCheckOverrides;
  kubeProxyHealthCheck: boolean;
  /** `proxy-protocol: "*"`: proxy protocol v2 on every target group, over any per-port setting. */
  proxyProtocolAll: boolean;
  /** Not an annotation: the account's quota of inbound rules per security group and family, from the controller. */
  rulesPerSecurityGroup: number;
}

/**
 * The target type of a Service whose annotations name none: instance, as the AWS Load Balancer Controller's
 * default, unless the Service allocates no node ports, which instance targets need: then ip, as on Azure.
 */
export function defaultTargetType(allocateNodePorts: boolean): "instance" | "ip" {
  return allocateNodePorts ? "instance" : "ip";
}

export function parseAwsSettings(
  annotations: Record<string, string>,
  defaults: {
    scheme: "internal" | "internet-facing";
    /** The target type when no annotation names one (defaultTargetType); instance when not given. */
    targetType?: "instance" | "ip";
    /** --aws-rules-per-security-group; EC2's default quota when not given. */
    rulesPerSecurityGroup?: number;
  },
): AwsServiceSettings {
  const a = AWS_ANNOTATIONS;
  const get = (key: string) => annotations[key]?.trim();
  const targetGroupAttributes = keyValuePairs(a.targetGroupAttributes, get(a.targetGroupAttributes));
  if (get(a.proxyProtocol)) {
    if (get(a.proxyProtocol) !== "*")
      fail(
        a.proxyProtocol,
        `"${get(a.proxyProtocol)}" is not supported`,
        'set it to "*" (proxy protocol v2 on every target group)',
      );
    targetGroupAttributes["proxy_protocol_v2.enabled"] = "true";
  }
  const loadBalancerAttributes = keyValuePairs(a.loadBalancerAttributes, get(a.loadBalancerAttributes));
  if (get(a.crossZone))
    loadBalancerAttributes["load_balancing.cross_zone.enabled"] = String(bool(a.crossZone, get(a.crossZone)));

  const internal = get(a.internal);
  const scheme =
    get(a.scheme) ??
    (internal !== undefined
      ? bool(a.internal, internal)
        ? "internal"
        : "internet-facing"
      : defaults.scheme);
  const type = get(a.type);
  // The AWS Load Balancer Controller's types that mean an NLB; Portico makes nothing else.
  if (type !== undefined) oneOf(a.type, type, ["external", "nlb", "nlb-ip"] as const);
  Object.assign(loadBalancerAttributes, accessLogAttributes(get));
  const settings: AwsServiceSettings = {
    ...parseNetworkSettings(get),
    ...parseListenerSettings(annotations),
    // The AWS Load Balancer Controller's legacy "nlb-ip" type means ip targets (nlb-target-type says it today).
    targetType: oneOf(
      a.targetType,
      get(a.targetType) ?? (get(a.type) === "nlb-ip" ? "ip" : (defaults.targetType ?? "instance")),
      ["instance", "ip"] as const,
    ),
    scheme: oneOf(a.scheme, scheme, ["internal", "internet-facing"] as const),
    subnets: list(get(a.subnets)),
    certificateArns: list(get(a.sslCert)),
    backendTls: get(a.backendProtocol) === "ssl",
    loadBalancerAttributes,
    targetGroupAttributes,
    additionalTags: keyValuePairs(a.additionalTags, get(a.additionalTags)),
    ipAddressType: oneOf(a.ipAddressType, get(a.ipAddressType) ?? "ipv4", ["ipv4", "dualstack"] as const),
    healthCheck: parseHealthCheck(get),
    kubeProxyHealthCheck:
      get(a.kubeProxyHealthCheck) !== undefined && bool(a.kubeProxyHealthCheck, get(a.kubeProxyHealthCheck)),
    proxyProtocolAll: get(a.proxyProtocol) === "*",
    rulesPerSecurityGroup: defaults.rulesPerSecurityGroup ?? DEFAULT_RULES_PER_SECURITY_GROUP,
  };
  if (get(a.backendProtocol) && !["ssl", "tcp"].includes(get(a.backendProtocol)!)) {
    fail(
      a.backendProtocol,
      `"${get(a.backendProtocol)}" is not a backend protocol for an NLB`,
      'use "tcp" or "ssl"',
    );
  }
  const name = get(a.name);
  if (name !== undefined) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?$/.test(name) || name.startsWith("internal-")) {
      fail(
        a.name,
        `"${name}" is not a valid load balancer name`,
        "use 1-32 letters, digits and hyphens, not starting or ending with a hyphen",
      );
    }
    settings.name = name;
  }
  checkAttributes(a.loadBalancerAttributes, settings.loadBalancerAttributes, LOAD_BALANCER_ATTRIBUTES);
  checkAttributes(a.targetGroupAttributes, settings.targetGroupAttributes, TARGET_GROUP_ATTRIBUTES);
  for (const [port, attributes] of Object.entries(settings.perPortTargetGroupAttributes))
    checkAttributes(
      `${AWS_ANNOTATIONS.targetGroupAttributesPrefix}${port}`,
      // An empty value keeps the unsuffixed annotation's (the AWS Load Balancer Controller's rule).
      Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== "")),
      TARGET_GROUP_ATTRIBUTES,
    );
  // Portico's own ownership tags (cluster, Service, UID, resource, listener) share each resource's 50.
  checkTags(a.additionalTags, settings.additionalTags, 5);
  if (get(a.sslPorts)) settings.sslPorts = list(get(a.sslPorts));
  if (get(a.sslPolicy)) settings.sslPolicy = get(a.sslPolicy)!;
  for (const arn of settings.certificateArns) {
    if (!arn.startsWith("arn:"))
      fail(a.sslCert, `"${arn}" is not a certificate ARN`, "give the ACM or IAM certificate ARN");
  }
  return settings;
}

/** Access logs to S3, as load balancer attributes. */
function accessLogAttributes(get: (key: string) => string | undefined): Record<string, string> {
  const a = AWS_ANNOTATIONS;
  // As the AWS controller does: the bucket and prefix count only when logging is enabled.
  if (optionalBool(a.accessLogEnabled, get(a.accessLogEnabled))) {
    const bucket = get(a.accessLogBucket);
    if (!bucket)
      fail(a.accessLogBucket, "access logs are enabled but no bucket is named", "name the S3 bucket");
    // S3's bucket naming rules: ELBv2 would refuse the attribute only after the NLB exists.
    if (
      !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) ||
      bucket.includes("..") ||
      /^\d+\.\d+\.\d+\.\d+$/.test(bucket)
    )
      fail(
        a.accessLogBucket,
        `"${bucket}" is not an S3 bucket name`,
        "use 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit",
      );
    return {
      "access_logs.s3.enabled": "true",
      "access_logs.s3.bucket": bucket,
      ...(get(a.accessLogPrefix) ? { "access_logs.s3.prefix": get(a.accessLogPrefix)! } : {}),
    };
  }
  // Said off: turned off on the NLB; absent: left as they are.
  return get(a.accessLogEnabled) !== undefined ? { "access_logs.s3.enabled": "false" } : {};
}

const bool = (annotation: string, value: string | undefined): boolean =>
  optionalBool(annotation, value) ?? false;
