// The cluster DNS, for tests that resolve Service names from pods (Kubernetes' own end-to-end tests do): CoreDNS
// as kubeadm installs it — its Service `kube-dns` at the cluster's DNS address, its Deployment, ConfigMap and
// RBAC, taken from kubeadm's addon manifests of the cluster's release — run from an image built locally
// (test/env/k8s-e2e.sh). Kubelets point pods at it only on clusters started with it (nodeConfig.ts). Zones the
// cluster's own DNS does not hold can be sent to another server, as a cloud's resolver answers its load
// balancers' names: the emulated NLBs' names are the edge's (edgeDns.ts), so pods resolve a Service's NLB
// hostname as they would on EKS.
import { KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import { apply } from "../manifests.ts";
import { waitForRollout } from "./install.ts";
import { CLUSTER_DNS_IP, CLUSTER_DOMAIN } from "./nodeConfig.ts";

/** A zone answered by another DNS server. */
export interface ForwardedZone {
  zone: string;
  server: string;
}

export async function installClusterDns(
  kubeconfig: string,
  image: string,
  opts: { forward?: readonly ForwardedZone[]; timeoutMs?: number } = {},
): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const objects = clusterDnsObjects(image, opts.forward ?? []);
  const failures = await apply(kc, objects, { dryRun: false });
  if (failures.length) throw new Error(`installing the cluster DNS failed: ${JSON.stringify(failures)}`);
  await waitForRollout(kc, objects, opts.timeoutMs ?? 180_000);
}

const labels = { "k8s-app": "kube-dns" };
const metadata = (name: string) => ({ name, namespace: "kube-system" });

// kubeadm's Corefile for the cluster domain, unchanged: test/images/coredns is built with exactly these plugins.
const COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success ${CLUSTER_DOMAIN}
       disable denial ${CLUSTER_DOMAIN}
    }
    loop
    reload
    loadbalance
}
`;

/**
 * A server block per forwarded zone, beside kubeadm's: CoreDNS answers a name from the block of its longest
 * matching zone. No cache: the edge's answers change as load balancers come and go (its own TTL is 1 s).
 */
export function corefile(forward: readonly ForwardedZone[]): string {
  return [
    COREFILE,
    ...forward.map(
      (f) => `${f.zone}:53 {
    errors
    forward . ${f.server}
}
`,
    ),
  ].join("");
}

export function clusterDnsObjects(image: string, forward: readonly ForwardedZone[] = []): KubernetesObject[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: metadata("coredns") },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        {
          apiGroups: [""],
          resources: ["endpoints", "services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: metadata("coredns"),
      data: { Corefile: corefile(forward) },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { ...metadata("kube-dns"), labels: { ...labels, "kubernetes.io/cluster-service": "true" } },
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        selector: labels,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
          { name: "metrics", port: 9153, protocol: "TCP", targetPort: 9153 },
        ],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { ...metadata("coredns"), labels },
      spec: {
        replicas: 2,
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            priorityClassName: "system-cluster-critical",
            serviceAccountName: "coredns",
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: {
                      labelSelector: {
                        matchExpressions: [{ key: "k8s-app", operator: "In", values: ["kube-dns"] }],
                      },
                      topologyKey: "kubernetes.io/hostname",
                    },
                  },
                ],
              },
            },
            tolerations: [{ key: "CriticalAddonsOnly", operator: "Exists" }],
            nodeSelector: { "kubernetes.io/os": "linux" },
            containers: [
              {
                name: "coredns",
                image,
                imagePullPolicy: "IfNotPresent",
                resources: { limits: { memory: "170Mi" }, requests: { cpu: "100m", memory: "70Mi" } },
                args: ["-conf", "/etc/coredns/Corefile"],
                volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
                ports: [
                  { containerPort: 53, name: "dns", protocol: "UDP" },
                  { containerPort: 53, name: "dns-tcp", protocol: "TCP" },
                  { containerPort: 9153, name: "metrics", protocol: "TCP" },
                  { containerPort: 8080, name: "liveness-probe", protocol: "TCP" },
                  { containerPort: 8181, name: "readiness-probe", protocol: "TCP" },
                ],
                livenessProbe: {
                  httpGet: { path: "/health", port: "liveness-probe", scheme: "HTTP" },
                  initialDelaySeconds: 60,
                  timeoutSeconds: 5,
                  failureThreshold: 5,
                },
                readinessProbe: { httpGet: { path: "/ready", port: "readiness-probe", scheme: "HTTP" } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
                  readOnlyRootFilesystem: true,
                },
              },
            ],
            dnsPolicy: "Default",
            volumes: [
              {
                name: "config-volume",
                configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] },
              },
            ],
          },
        },
      },
    },
  ] as KubernetesObject[];
}
