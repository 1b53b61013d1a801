// The health probe of each rule: the behaviour table's default for the target type and traffic policy, with
// the Service's annotations (global, then per port) on top. Pure.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import type { AzureServiceSettings, ProbeOverrides } from "../annotations/settings.ts";
import type { ProbeSpec } from "../model.ts";

export const KUBE_PROXY_HEALTH_PORT = 10256;
/** cloud-provider-azure's defaults, which AKS users' probes already run with. */
const DEFAULT_INTERVAL_SECONDS = 5;
const DEFAULT_NUMBER_OF_PROBES = 2;

export interface ProbeInput {
  intent: LoadBalancerIntent;
  settings: AzureServiceSettings;
  targetType: "instance" | "ip";
  port: PortIntent;
  /** Where the rule sends traffic on a backend. */
  backendPort: number;
  /** The backend port of every Service port, for probes that name another port. */
  backendPorts: Map<PortIntent, number>;
  name: string;
}

/** The probe for one rule, or undefined when the rule goes without one. */
export function probeFor(p: ProbeInput): ProbeSpec | undefined {
  const own = p.settings.ports[p.port.port] ?? {};
  if (own.noProbe) return undefined;
  const o: ProbeOverrides = { ...p.settings.probe, ...own };
  const base = defaultProbe(p);
  if (!base && !o.protocol && !o.port) return undefined;
  const protocol = o.protocol ?? base?.protocol ?? "Tcp";
  const port = o.port !== undefined ? probePort(p, o.port) : (base?.port ?? p.backendPort);
  const probe: ProbeSpec = {
    name: p.name,
    protocol,
    port,
    intervalInSeconds: o.intervalSeconds ?? DEFAULT_INTERVAL_SECONDS,
    numberOfProbes: o.numberOfProbes ?? DEFAULT_NUMBER_OF_PROBES,
  };
  // A TCP probe must not carry a path (ARM refuses it); an HTTP(S) one must.
  if (protocol !== "Tcp")
    probe.requestPath = o.requestPath ?? (base?.protocol !== "Tcp" ? base?.requestPath : "/") ?? "/";
  return probe;
}

function defaultProbe(p: ProbeInput): Pick<ProbeSpec, "protocol" | "port" | "requestPath"> | undefined {
  const { intent, port } = p;
  if (p.targetType === "ip") {
    // A UDP pod port cannot answer a TCP probe; without one, every pod in the pool counts as healthy.
    return port.protocol === "UDP" ? undefined : { protocol: "Tcp", port: p.backendPort };
  }
  if (intent.externalTrafficPolicy === "Local" && intent.healthCheckNodePort)
    return { protocol: "Http", port: intent.healthCheckNodePort, requestPath: "/healthz" };
  if (p.settings.kubeProxyHealthCheck || port.protocol === "UDP" || !port.nodePort)
    return { protocol: "Http", port: KUBE_PROXY_HEALTH_PORT, requestPath: "/healthz" };
  return { protocol: "Tcp", port: port.nodePort };
}

/** A number, or the name or number of a Service port, whose backend port (node or target port) is probed. */
function probePort(p: ProbeInput, value: string): number {
  const byName = [...p.backendPorts.entries()].find(([sp]) => sp.name !== "" && sp.name === value);
  if (byName) return byName[1];
  if (/^\d+$/.test(value)) {
    const byNumber = [...p.backendPorts.entries()].find(([sp]) => sp.port === Number(value));
    if (byNumber) return byNumber[1];
    const n = Number(value);
    if (n >= 1 && n <= 65535) return n;
  }
  throw new ConfigurationError(
    "InvalidAnnotation",
    `metadata.annotations[service.beta.kubernetes.io/port_${p.port.port}_health-probe_port]`,
    `"${value}" is neither a port number nor the name of one of the Service's ports`,
    "give a number from 1 to 65535 or a port's name",
  );
}
