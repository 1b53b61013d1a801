// The annotations that set one listener or one port's target group apart from the rest, parsed as the AWS Load
// Balancer Controller reads them: per-port target-group attributes and proxy protocol, listener attributes by
// `<PROTOCOL>-<port>`, and the TLS listeners' ALPN policy.
import {
  invalidAnnotation as fail,
  keyValuePairs,
  oneOf,
  splitList as list,
} from "../../annotationValues.ts";
import { AWS_ANNOTATION_KEYS as a } from "./catalog.ts";

export const ALPN_POLICIES = ["HTTP1Only", "HTTP2Only", "HTTP2Optional", "HTTP2Preferred", "None"] as const;

export interface ListenerSettings {
  /** Target-group attributes by Service port, over the unsuffixed annotation's. */
  perPortTargetGroupAttributes: Record<number, Record<string, string>>;
  /** Ports whose target groups get proxy protocol v2 (undefined: the annotation is absent). */
  proxyProtocolPorts?: number[];
  alpnPolicy?: (typeof ALPN_POLICIES)[number];
  /** Listener attributes by `<PROTOCOL>-<port>`, e.g. `TCP-80`. */
  listenerAttributes: Record<string, Record<string, string>>;
}

export function parseListenerSettings(annotations: Record<string, string>): ListenerSettings {
  const get = (key: string) => annotations[key]?.trim();
  const settings: ListenerSettings = { perPortTargetGroupAttributes: {}, listenerAttributes: {} };
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
  return settings;
}

function portOf(annotation: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535)
    fail(annotation, `"${value}" is not a port number`, "give a port from 1 to 65535");
  return n;
}
