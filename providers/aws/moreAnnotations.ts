// The AWS Load Balancer Controller's annotations for security groups, static addresses, listeners and per-port
// target groups, parsed as that controller reads them. Every error names the annotation and the fix.
import {
  invalidAnnotation as fail,
  keyValuePairs,
  oneOf,
  optionalBool,
  splitList as list,
} from "../annotationValues.ts";
import { AWS_ANNOTATION_KEYS } from "../annotationKeys/aws.ts";

export const ALPN_POLICIES = ["HTTP1Only", "HTTP2Only", "HTTP2Optional", "HTTP2Preferred", "None"] as const;

export interface MoreAwsSettings {
  /** Undefined: the default (on with Portico's own group, off with the user's, as the AWS controller does). */
  manageBackendRules?: boolean;
  /** The user's security groups, by ID or name, first the one backend rules refer to. */
  securityGroups: string[];
  disableNlbSg: boolean;
  eipAllocations: string[];
  privateIPv4Addresses: string[];
  ipv6Addresses: string[];
  /** Target-group attributes by Service port, over the unsuffixed annotation's. */
  perPortTargetGroupAttributes: Record<number, Record<string, string>>;
  /** Ports whose target groups get proxy protocol v2 (undefined: the annotation is absent). */
  proxyProtocolPorts?: number[];
  alpnPolicy?: (typeof ALPN_POLICIES)[number];
  /** Listener attributes by `<PROTOCOL>-<port>`, e.g. `TCP-80`. */
  listenerAttributes: Record<string, Record<string, string>>;
  prefixLists: string[];
  accessLogAttributes: Record<string, string>;
  privateLinkInboundRules?: "on" | "off";
}

export function parseMoreAwsSettings(annotations: Record<string, string>): MoreAwsSettings {
  const a = AWS_ANNOTATION_KEYS;
  const get = (key: string) => annotations[key]?.trim();
  const settings: MoreAwsSettings = {
    securityGroups: list(get(a.securityGroups)),
    disableNlbSg: optionalBool(a.disableNlbSg, get(a.disableNlbSg)) ?? false,
    eipAllocations: list(get(a.eipAllocations)),
    privateIPv4Addresses: list(get(a.privateIPv4Addresses)),
    ipv6Addresses: list(get(a.ipv6Addresses)),
    perPortTargetGroupAttributes: {},
    listenerAttributes: {},
    prefixLists: list(get(a.prefixLists)),
    accessLogAttributes: {},
  };
  const manage = optionalBool(a.manageBackendRules, get(a.manageBackendRules));
  if (manage !== undefined) settings.manageBackendRules = manage;
  for (const id of settings.prefixLists)
    if (!/^pl-[0-9a-f]+$/.test(id))
      fail(a.prefixLists, `"${id}" is not a prefix list ID`, 'give IDs like "pl-0123abcd"');
  for (const id of settings.eipAllocations)
    if (!/^eipalloc-[0-9a-f]+$/.test(id))
      fail(
        a.eipAllocations,
        `"${id}" is not an Elastic IP allocation ID`,
        'give IDs like "eipalloc-0123abcd"',
      );

  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith(a.targetGroupAttributesPrefix)) {
      const port = portOf(key, key.slice(a.targetGroupAttributesPrefix.length));
      settings.perPortTargetGroupAttributes[port] = keyValuePairs(key, value.trim());
    } else if (key.startsWith(a.listenerAttributesPrefix)) {
      const suffix = key.slice(a.listenerAttributesPrefix.length);
      const m = /^(TCP|UDP|TCP_UDP|TLS)-(\d+)$/.exec(suffix);
      if (!m)
        fail(
          key,
          `"${suffix}" does not name a listener`,
          "write <PROTOCOL>-<port>, e.g. listener-attributes.TCP-80",
        );
      portOf(key, m[2]!);
      settings.listenerAttributes[suffix] = keyValuePairs(key, value.trim());
    }
  }
  const proxy = get(a.proxyProtocolPerTargetGroup);
  if (proxy !== undefined)
    settings.proxyProtocolPorts = list(proxy).map((p) => portOf(a.proxyProtocolPerTargetGroup, p));
  const alpn = get(a.alpnPolicy);
  if (alpn) settings.alpnPolicy = oneOf(a.alpnPolicy, alpn, ALPN_POLICIES);
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
    settings.accessLogAttributes = {
      "access_logs.s3.enabled": "true",
      "access_logs.s3.bucket": bucket,
      ...(get(a.accessLogPrefix) ? { "access_logs.s3.prefix": get(a.accessLogPrefix)! } : {}),
    };
  } else if (get(a.accessLogEnabled) !== undefined) {
    settings.accessLogAttributes = { "access_logs.s3.enabled": "false" };
  }
  const privateLink = get(a.privateLinkInboundRules);
  if (privateLink)
    settings.privateLinkInboundRules = oneOf(a.privateLinkInboundRules, privateLink, ["on", "off"] as const);
  return settings;
}

function portOf(annotation: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535)
    fail(annotation, `"${value}" is not a port number`, "give a port from 1 to 65535");
  return n;
}
