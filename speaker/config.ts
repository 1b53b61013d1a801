// The speaker's configuration, from command-line flags (some with an environment variable fallback, as a
// DaemonSet passes the node name through the downward API).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEFAULT_EXCLUDED_INTERFACES } from "./io/interfaces.ts";
import { DEFAULT_BURST_MS } from "./io/takeover.ts";
import { checkedListenAddress } from "../shared/metricsServer.ts";
import { UsageError } from "../shared/usageError.ts";

export const METAL_LOAD_BALANCER_CLASS = "portico.io/metal";

export interface SpeakerConfig {
  readonly nodeName: string;
  readonly kubeconfig?: string;
  readonly loadBalancerClass: string;
  readonly defaultForUnclassed: boolean;
  readonly namespace?: string;
  readonly nodeSelector?: string;
  /** MetalLB's IPAddressPools and L2Advertisements: read when installed (auto), required (on), or never (off). */
  readonly metallb: { readonly mode: "auto" | "on" | "off"; readonly namespace: string };
  readonly interfaces: readonly string[];
  readonly excludeInterfaces: readonly string[];
  readonly interfaceRescanMs: number;
  readonly metricsAddress: string;
  readonly memberlist: {
    readonly port: number;
    readonly bindAddress?: string;
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly fanout: number;
    readonly secret?: Buffer;
  };
  readonly gratuitous: { readonly burstOffsetsMs: readonly number[]; readonly periodicMs: number };
  readonly maxRepliesPerSecond: number;
  readonly logLevel: string;
  /**
   * BGP mode: the directory shared with the FRR agent (frr.conf written here, status.json read), and the
   * namespace whose Secrets hold the BGPPeers' passwords. Absent: L2 mode only.
   */
  readonly bgp?: { readonly frrDir: string; readonly secretNamespace: string };
  /**
   * This speaker's own pod (env POD_NAME and POD_NAMESPACE, from the downward API): read on SIGTERM to tell a
   * rolling update of its DaemonSet (keep the addresses for the new pod) from a departure.
   */
  readonly pod?: { readonly name: string; readonly namespace: string };
}

const OPTIONS = {
  "node-name": { type: "string" },
  interfaces: { type: "string" },
  "exclude-interfaces": { type: "string" },
  "interface-rescan-ms": { type: "string" },
  "load-balancer-class": { type: "string" },
  "default-load-balancer": { type: "boolean" },
  namespace: { type: "string" },
  "node-selector": { type: "string" },
  metallb: { type: "string" },
  "metallb-namespace": { type: "string" },
  "metrics-address": { type: "string" },
  "memberlist-port": { type: "string" },
  "memberlist-bind-address": { type: "string" },
  "memberlist-interval-ms": { type: "string" },
  "memberlist-timeout-ms": { type: "string" },
  "memberlist-fanout": { type: "string" },
  "memberlist-secret-file": { type: "string" },
  "gratuitous-interval-ms": { type: "string" },
  "max-replies-per-second": { type: "string" },
  "log-level": { type: "string" },
  "frr-config-dir": { type: "string" },
  "secret-namespace": { type: "string" },
  kubeconfig: { type: "string" },
  help: { type: "boolean" },
} as const;

/** Every option the command line accepts, for the reference that lists them. */
export const OPTION_NAMES: readonly string[] = Object.keys(OPTIONS);

export const USAGE = `portico-speaker: announces bare-metal LoadBalancer addresses over ARP and NDP (one per node)

  --node-name NAME                 this Node's name (env NODE_NAME, required)
  --interfaces LIST                interfaces or globs to announce on, comma-separated (default: all Ethernet)
  --exclude-interfaces LIST        never these, unless named exactly in --interfaces
                                   (default ${DEFAULT_EXCLUDED_INTERFACES.join(",")})
  --interface-rescan-ms MS         look for new or vanished interfaces this often (default 10000)
  --load-balancer-class CLASS      the class announced (default ${METAL_LOAD_BALANCER_CLASS})
  --default-load-balancer          also announce LoadBalancer Services without a class
  --namespace NS                   announce one namespace's Services only (default: all)
  --node-selector SELECTOR         only Nodes matching this label selector take part
  --metallb auto|on|off            read MetalLB's IPAddressPools and L2Advertisements (metallb.io/v1beta1) too:
                                   when their CRDs are installed (auto, the default), always, or never
  --metallb-namespace NS           where MetalLB's objects live (default metallb-system)
  --metrics-address HOST:PORT      /metrics, /healthz, /readyz (default :7472)
  --memberlist-port PORT           UDP port of the membership protocol, the same on every node (default 7946)
  --memberlist-bind-address IP     listen on this address only (default: all)
  --memberlist-interval-ms MS      probe interval (default 100)
  --memberlist-timeout-ms MS       silence after which a speaker is dead (default 500)
  --memberlist-fanout N            successors each speaker probes (default 2)
  --memberlist-secret-file FILE    shared secret authenticating membership traffic (env MEMBERLIST_SECRET)
  --gratuitous-interval-ms MS      re-announce owned addresses this often after the takeover burst (default 0: off)
  --max-replies-per-second N       per interface (default 5000; 0: unlimited)
  --frr-config-dir DIR             BGP mode: advertise through FRR, writing its configuration here for the FRR
                                   agent beside it (manifests/speaker/frr) and reading the sessions' state back
  --secret-namespace NS            where BGPPeers' passwordSecrets live (default: env POD_NAMESPACE, else
                                   portico-system)
  --log-level LEVEL                how much to log: trace, debug, info, warn, error or fatal
                                   (default info; env PORTICO_LOG_LEVEL)
  env POD_NAME, POD_NAMESPACE      this speaker's pod: on SIGTERM during a rolling update of its DaemonSet, its
                                   addresses wait for the new pod instead of moving (unset: they move)
  --kubeconfig FILE                outside a cluster (env KUBECONFIG): a token, token file or client
                                   certificate (exec plugins and auth providers are refused)`;

function list(value: string | undefined): string[] | undefined {
  return value
    ?.split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

function integer(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name}: expected an integer >= ${min}, got "${value}"`);
  return n;
}

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): SpeakerConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: OPTIONS,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE);
  const nodeName = values["node-name"] ?? env.NODE_NAME;
  if (!nodeName) throw new UsageError(`--node-name (or NODE_NAME) is required\n\n${USAGE}`);
  const intervalMs = integer("memberlist-interval-ms", values["memberlist-interval-ms"], 100, 10);
  const timeoutMs = integer("memberlist-timeout-ms", values["memberlist-timeout-ms"], 500, 1);
  if (timeoutMs < 2 * intervalMs) {
    throw new UsageError("--memberlist-timeout-ms must be at least twice --memberlist-interval-ms");
  }
  const secretFile = values["memberlist-secret-file"];
  const secretText = secretFile ? readFileSync(secretFile, "utf8").trim() : env.MEMBERLIST_SECRET;
  const kubeconfig = values.kubeconfig ?? env.KUBECONFIG;
  const bindAddress = values["memberlist-bind-address"];
  const metallbMode = values.metallb ?? "auto";
  if (metallbMode !== "auto" && metallbMode !== "on" && metallbMode !== "off") {
    throw new UsageError(`--metallb: expected auto, on or off, got "${metallbMode}"`);
  }
  return {
    nodeName,
    ...(kubeconfig ? { kubeconfig } : {}),
    loadBalancerClass: values["load-balancer-class"] ?? METAL_LOAD_BALANCER_CLASS,
    defaultForUnclassed: values["default-load-balancer"] ?? false,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values["node-selector"] ? { nodeSelector: values["node-selector"] } : {}),
    metallb: { mode: metallbMode, namespace: values["metallb-namespace"] ?? "metallb-system" },
    interfaces: list(values.interfaces) ?? [],
    excludeInterfaces: list(values["exclude-interfaces"]) ?? DEFAULT_EXCLUDED_INTERFACES,
    interfaceRescanMs: integer("interface-rescan-ms", values["interface-rescan-ms"], 10_000, 100),
    metricsAddress: checkedListenAddress("--metrics-address", values["metrics-address"] ?? ":7472"),
    memberlist: {
      port: integer("memberlist-port", values["memberlist-port"], 7946, 1),
      ...(bindAddress ? { bindAddress } : {}),
      intervalMs,
      timeoutMs,
      fanout: integer("memberlist-fanout", values["memberlist-fanout"], 2, 1),
      ...(secretText ? { secret: Buffer.from(secretText) } : {}),
    },
    gratuitous: {
      burstOffsetsMs: DEFAULT_BURST_MS,
      periodicMs: integer("gratuitous-interval-ms", values["gratuitous-interval-ms"], 0, 0),
    },
    maxRepliesPerSecond: integer("max-replies-per-second", values["max-replies-per-second"], 5000, 0),
    logLevel: values["log-level"] ?? env.PORTICO_LOG_LEVEL ?? "info",
    ...(env.POD_NAME && env.POD_NAMESPACE
      ? { pod: { name: env.POD_NAME, namespace: env.POD_NAMESPACE } }
      : {}),
    ...(values["frr-config-dir"]
      ? {
          bgp: {
            frrDir: values["frr-config-dir"],
            secretNamespace: values["secret-namespace"] ?? env.POD_NAMESPACE ?? "portico-system",
          },
        }
      : {}),
  };
}
