// The Service annotations users already write for cloud-provider-azure (AKS), and Portico's own, parsed and
// validated into settings. Every error names the annotation and how to fix it.
import { Address4, Address6 } from "ip-address";
import {
  invalidAnnotation as fail,
  oneOf,
  optionalBool as bool,
  wholeNumber as int,
} from "../../annotationValues.ts";
import { AZURE_ANNOTATION_KEYS, AZURE_PORT_SETTINGS } from "./catalog.ts";
import { PORTICO_ANNOTATIONS } from "../../annotationKeys/portico.ts";
import { ConfigurationError } from "../../errors.ts";
import { parseAccessSettings, type AccessSettings } from "./access.ts";
import { parsePublicIpSettings, type PublicIpSettings } from "./publicIp.ts";
import { parseIpv6Settings, type Ipv6Settings } from "./ipFamilies.ts";

/** Every key the Azure parsers read: the catalog's (where each is spelled once), and Portico's own. */
export const AZURE_ANNOTATIONS = {
  ...AZURE_ANNOTATION_KEYS,
  /** Portico's: `instance` (node IPs, the default) or `ip` (pod IPs; the default without node ports). */
  targetType: PORTICO_ANNOTATIONS.targetType,
  /** Portico's: floating IP (direct server return) on the Service's rules. */
  floatingIP: PORTICO_ANNOTATIONS.floatingIP,
  /** Portico's opt-in for kube-proxy's drain-aware health endpoint with `externalTrafficPolicy: Cluster`. */
  kubeProxyHealthCheck: PORTICO_ANNOTATIONS.kubeProxyHealthCheck,
} as const;

/** Per-port annotations: `service.beta.kubernetes.io/port_{port}_health-probe_{setting}` and friends. */
const PORT_ANNOTATION =
  /^service\.beta\.kubernetes\.io\/port_(\d+)_(health-probe_[a-z-]+|no_lb_rule|no_probe_rule)$/;

export interface ProbeOverrides {
  protocol?: "Tcp" | "Http" | "Https";
  /** A port number, or the name or number of a Service port whose node or target port is probed. */
  port?: string;
  requestPath?: string;
  intervalSeconds?: number;
  numberOfProbes?: number;
}

export interface PortSettings extends ProbeOverrides {
  /** No rule and no probe for this port (e.g. a health port that must not be exposed). */
  noRule?: boolean;
  /** A rule without a probe: every backend counts as healthy. */
  noProbe?: boolean;
}

export interface AzureServiceSettings extends AccessSettings, PublicIpSettings {
  internal: boolean;
  internalSubnet?: string;
  /** What the `-ipv6` annotations ask of the Service's IPv6 frontend (ipFamilies.ts, beside it). */
  ipv6: Ipv6Settings;
  publicIpName?: string;
  /** An address asked for: an existing public IP's address, or a static private address for internal ones. */
  requestedAddress?: { address: string; field: string };
  /** Where named or requested public IPs are looked for (and made); default the cluster's resource group. */
  publicIpResourceGroup?: string;
  /** Undefined: instance, or ip when the Service has no node ports. */
  targetType?: "instance" | "ip";
  /**
   * Undefined: not asked for either way; the cluster's default applies (floatingIPDefault,
   * desired/desired.ts).
   */
  floatingIP?: boolean;
  /** TCP resets on idle timeout, on unless azure-load-balancer-disable-tcp-reset is "true" (as in AKS). */
  tcpReset: boolean;
  idleTimeoutMinutes?: number;
  probe: ProbeOverrides;
  ports: Record<number, PortSettings>;
  kubeProxyHealthCheck: boolean;
}

/** `loadBalancerIP`: spec.loadBalancerIP, when the intent carries it. */
export function parseAzureSettings(
  annotations: Record<string, string>,
  loadBalancerIP?: string,
): AzureServiceSettings {
  const a = AZURE_ANNOTATIONS;
  const get = (key: string) => annotations[key]?.trim() || undefined;
  const internal = bool(a.internal, get(a.internal)) ?? false;
  const settings: AzureServiceSettings = {
    internal,
    tcpReset: !(bool(a.disableTcpReset, get(a.disableTcpReset)) ?? false),
    probe: probeOverrides({
      protocol: [a.probeProtocol, get(a.probeProtocol)],
      requestPath: [a.probeRequestPath, get(a.probeRequestPath)],
      interval: [a.probeInterval, get(a.probeInterval)],
      numOfProbe: [a.probeNumOfProbe, get(a.probeNumOfProbe)],
    }),
    ports: portSettings(annotations),
    kubeProxyHealthCheck: bool(a.kubeProxyHealthCheck, get(a.kubeProxyHealthCheck)) ?? false,
    ...parseAccessSettings(get),
    ...parsePublicIpSettings(get, internal),
    ipv6: parseIpv6Settings(get, internal),
  };
  const floating = floatingIP(get);
  if (floating !== undefined) settings.floatingIP = floating;
  const subnet = get(a.internalSubnet);
  if (subnet && internal) settings.internalSubnet = armChildName(a.internalSubnet, subnet);
  const pipName = get(a.pipName);
  if (pipName) {
    if (internal)
      fail(a.pipName, "names a public IP, but the Service is internal", `remove it or ${a.internal}`);
    settings.publicIpName = armChildName(a.pipName, pipName);
  }
  const spec = loadBalancerIP?.trim() || undefined;
  // spec.loadBalancerIP names one address of either family; an IPv6 one is the IPv6 frontend's.
  const specV6 = spec?.includes(":") ? spec : undefined;
  const requested = requestedAddress(get(a.ipv4), specV6 ? undefined : spec);
  if (requested) settings.requestedAddress = requested;
  if (specV6) settings.ipv6.requestedAddress = requestedV6(settings.ipv6.requestedAddress, specV6);
  const rg = get(a.resourceGroup);
  if (rg) settings.publicIpResourceGroup = rg;
  const targetType = get(a.targetType);
  if (targetType) settings.targetType = oneOf(a.targetType, targetType, ["instance", "ip"] as const);
  const idle = get(a.idleTimeout);
  if (idle) settings.idleTimeoutMinutes = int(a.idleTimeout, idle, 4, 100);
  return settings;
}

function floatingIP(get: (key: string) => string | undefined): boolean | undefined {
  const a = AZURE_ANNOTATIONS;
  const own = bool(a.floatingIP, get(a.floatingIP));
  const disabled = bool(a.disableFloatingIP, get(a.disableFloatingIP));
  // Either annotation says it explicitly; without both, the cluster's floatingIPDefault decides
  // (desired/desired.ts).
  const fromAzure = disabled === undefined ? undefined : !disabled;
  if (own !== undefined && fromAzure !== undefined && own !== fromAzure)
    fail(a.floatingIP, `contradicts ${a.disableFloatingIP}`, "keep one of the two annotations");
  return own ?? fromAzure;
}

function requestedAddress(annotation: string | undefined, spec: string | undefined) {
  const a = AZURE_ANNOTATIONS;
  if (annotation && spec && annotation !== spec)
    fail(
      a.ipv4,
      `asks for ${annotation} and spec.loadBalancerIP for ${spec}`,
      "keep one, or make them equal",
    );
  const address = annotation ?? spec;
  if (!address) return undefined;
  const field = annotation ? `metadata.annotations[${a.ipv4}]` : "spec.loadBalancerIP";
  if (!Address4.isValid(address) || address.includes("/"))
    throw new ConfigurationError(
      "InvalidAnnotation",
      field,
      `"${address}" is not an IPv4 address`,
      "give one address",
    );
  return { address, field };
}

/** spec.loadBalancerIP holding an IPv6 address: the IPv6 frontend's, unless the annotation asks for another. */
function requestedV6(annotation: { address: string; field: string } | undefined, spec: string) {
  const a = AZURE_ANNOTATIONS;
  if (!Address6.isValid(spec) || spec.includes("/"))
    throw new ConfigurationError(
      "InvalidAnnotation",
      "spec.loadBalancerIP",
      `"${spec}" is not an IP address`,
      "give one address",
    );
  const address = new Address6(spec).correctForm();
  if (annotation && annotation.address !== address)
    fail(
      a.ipv6,
      `asks for ${annotation.address} and spec.loadBalancerIP for ${address}`,
      "keep one, or make them equal",
    );
  return annotation ?? { address, field: "spec.loadBalancerIP" };
}

type Raw = [annotation: string, value: string | undefined];

function probeOverrides(raw: {
  protocol?: Raw;
  port?: Raw;
  requestPath?: Raw;
  interval?: Raw;
  numOfProbe?: Raw;
}): ProbeOverrides {
  const o: ProbeOverrides = {};
  const [protocolKey, protocol] = raw.protocol ?? ["", undefined];
  if (protocol) {
    const normal = protocol.charAt(0).toUpperCase() + protocol.slice(1).toLowerCase();
    o.protocol = oneOf(protocolKey, normal, ["Tcp", "Http", "Https"] as const);
  }
  const [, port] = raw.port ?? ["", undefined];
  if (port) o.port = port;
  const [pathKey, path] = raw.requestPath ?? ["", undefined];
  if (path) {
    if (!path.startsWith("/")) fail(pathKey, `"${path}" is not a path`, 'start it with "/", e.g. "/healthz"');
    o.requestPath = path;
  }
  const [intervalKey, interval] = raw.interval ?? ["", undefined];
  if (interval) o.intervalSeconds = int(intervalKey, interval, 5, 120);
  const [countKey, count] = raw.numOfProbe ?? ["", undefined];
  if (count) o.numberOfProbes = int(countKey, count, 1, 24);
  if ((o.intervalSeconds ?? 5) * (o.numberOfProbes ?? 2) > 120)
    fail(
      intervalKey || countKey,
      `the interval times the number of probes exceeds 120 seconds (${[intervalKey, countKey].filter(Boolean).join(" with ")})`,
      "lower one of them",
    );
  return o;
}

function portSettings(annotations: Record<string, string>): Record<number, PortSettings> {
  const grouped = new Map<number, Record<string, Raw>>();
  for (const [key, value] of Object.entries(annotations)) {
    const m = key.match(PORT_ANNOTATION);
    if (!m) continue;
    const port = Number(m[1]);
    grouped.set(port, { ...grouped.get(port), [m[2]!]: [key, value.trim() || undefined] });
  }
  const out: Record<number, PortSettings> = {};
  for (const [port, raw] of grouped) {
    const settings: PortSettings = probeOverrides({
      ...(raw["health-probe_protocol"] ? { protocol: raw["health-probe_protocol"] } : {}),
      ...(raw["health-probe_port"] ? { port: raw["health-probe_port"] } : {}),
      ...(raw["health-probe_request-path"] ? { requestPath: raw["health-probe_request-path"] } : {}),
      ...(raw["health-probe_interval"] ? { interval: raw["health-probe_interval"] } : {}),
      ...(raw["health-probe_num-of-probe"] ? { numOfProbe: raw["health-probe_num-of-probe"] } : {}),
    });
    const [portKey, probePort] = raw["health-probe_port"] ?? ["", undefined];
    if (probePort && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(probePort))
      fail(
        portKey,
        `"${probePort}" is neither a port number nor a port name`,
        "give a number or a port's name",
      );
    const noRule = raw.no_lb_rule;
    if (noRule && bool(noRule[0], noRule[1])) settings.noRule = true;
    const noProbe = raw.no_probe_rule;
    if (noProbe && bool(noProbe[0], noProbe[1])) settings.noProbe = true;
    for (const [key, [annotation]] of Object.entries(raw)) {
      if (!AZURE_PORT_SETTINGS.includes(key))
        fail(
          annotation,
          "is not a per-port setting Portico knows",
          `use one of ${AZURE_PORT_SETTINGS.join(", ")}`,
        );
    }
    out[port] = settings;
  }
  return out;
}

function armChildName(annotation: string, value: string): string {
  if (!/^[A-Za-z0-9]([A-Za-z0-9._-]{0,78}[A-Za-z0-9_])?$/.test(value))
    fail(
      annotation,
      `"${value}" is not a valid Azure resource name`,
      "use letters, digits, '.', '-' and '_'",
    );
  return value;
}
