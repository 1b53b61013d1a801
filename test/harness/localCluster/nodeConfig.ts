// The configuration files of one local-cluster node, as pure functions of where its files live and what it
// is called: containerd's (CRI with runc and the CNI reference plugins), the CNI network, kubelet's and
// kube-proxy's. The settings that differ from a stock install are the ones this machine needs, each said why.
import { join } from "node:path";

export const POD_CIDR = "10.244.0.0/16";
/** The pause image containerd's CRI starts every pod sandbox from; built locally, never pulled. */
export const SANDBOX_IMAGE = "registry.k8s.io/pause:3.10";
export const CNI_BIN_DIR = "/usr/lib/cni";
/** The cluster DNS Service's address, as kubeadm gives it (the tenth of the service range): clusterDns.ts. */
export const CLUSTER_DNS_IP = "10.96.0.10";
export const CLUSTER_DOMAIN = "cluster.local";

export interface NodeLayout {
  name: string;
  /** The node's address on the LAN: kubelet registers it as InternalIP, kube-proxy binds to it. */
  ip: string;
  /** This node's share of POD_CIDR. */
  podCidr: string;
  /** Everything of the node's lives under here. */
  dir: string;
  /** The node's cgroup, relative to every hierarchy's root: kubelet's cgroupRoot. */
  cgroup: string;
  /** Pods resolve names through the cluster DNS (clusterDns.ts); without it they get the machine's resolver. */
  clusterDns?: boolean;
}

export function podCidrFor(index: number): string {
  return `10.244.${index}.0/24`;
}

export const paths = (node: NodeLayout) => ({
  containerdConfig: join(node.dir, "containerd.toml"),
  containerdSocket: join(node.dir, "containerd.sock"),
  cniConfDir: join(node.dir, "cni-conf"),
  kubeletConfig: join(node.dir, "kubelet.json"),
  kubeProxyConfig: join(node.dir, "kube-proxy.json"),
});

export function containerdConfig(node: NodeLayout): string {
  const p = paths(node);
  const cri = `plugins."io.containerd.grpc.v1.cri"`;
  return `version = 2
root = "${join(node.dir, "containerd", "root")}"
state = "${join(node.dir, "containerd", "state")}"
# Snapshotters this machine has no use for only slow the start and log errors.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "${p.containerdSocket}"

[ttrpc]
  address = "${p.containerdSocket}.ttrpc"

[${cri}]
  sandbox_image = "${SANDBOX_IMAGE}"
  # Root here lacks CAP_SYS_RESOURCE, so a container may not lower its OOM score below containerd's own.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  # No systemd here: kubelet runs with the cgroupfs driver, and runc must agree with it.
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${p.cniConfDir}"
`;
}

/**
 * A bridge on the node with the pods' addresses from the node's share of the pod CIDR; other nodes' pods are
 * reached through routes to their node on the LAN. Pod traffic leaving the pod network is masqueraded by the
 * node (podMasquerade), not by the bridge plugin, whose ipMasq would also translate traffic to other nodes'
 * pods (it spares only the node's own share): pods must see each other's addresses, as Kubernetes' network
 * model requires and the ExternalTrafficPolicy: Local tests check from pods.
 */
export function cniConfig(node: NodeLayout): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "portico-pods",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: node.podCidr }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** The node's rule (iptables, nat table) masquerading its pods' traffic that leaves the pod network. */
export function podMasquerade(node: NodeLayout): string[] {
  return ["POSTROUTING", "-s", node.podCidr, "!", "-d", POD_CIDR, "-j", "MASQUERADE"];
}

export function kubeletConfig(node: NodeLayout, caFile: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      address: node.ip,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: caFile },
      },
      authorization: { mode: "Webhook" },
      cgroupDriver: "cgroupfs",
      cgroupRoot: node.cgroup,
      // The hosts have cgroup v1 controllers; 1.35 would refuse them, 1.34 only when told to.
      failCgroupV1: false,
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${paths(node).containerdSocket}`,
      clusterDomain: CLUSTER_DOMAIN,
      ...(node.clusterDns ? { clusterDNS: [CLUSTER_DNS_IP] } : {}),
      resolvConf: "/etc/resolv.conf",
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      rotateCertificates: false,
      // Three nodes share one machine's disk: the default thresholds would see the others' use as pressure.
      evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // Reported often so the node lifecycle controller notices a dead node quickly.
      nodeStatusUpdateFrequency: "4s",
      serializeImagePulls: false,
    },
    null,
    2,
  );
}

export function kubeProxyConfig(node: NodeLayout, kubeconfig: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      clientConnection: { kubeconfig },
      hostnameOverride: node.name,
      bindAddress: node.ip,
      healthzBindAddress: "0.0.0.0:10256",
      metricsBindAddress: "127.0.0.1:10249",
      mode: "iptables",
      clusterCIDR: POD_CIDR,
      // 0 leaves the machine-wide conntrack table size and timeouts alone (kube-proxy would raise them).
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
      iptables: { syncPeriod: "30s", minSyncPeriod: "0s" },
    },
    null,
    2,
  );
}
