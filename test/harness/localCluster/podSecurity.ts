// The local cluster enforces Pod Security as a hardened cluster does: kube-apiserver's PodSecurity admission
// refuses, in every namespace that does not say otherwise by its `pod-security.kubernetes.io/enforce` label, the
// pods that break the baseline standard (host namespaces, added capabilities beyond the default set,
// privileged containers, host paths). Portico's speakers (host network, CAP_NET_RAW) and its FRR containers
// (NET_ADMIN, SYS_ADMIN) break it, so Portico's documented installs must label their namespace privileged;
// were one to leave the label out, its speakers would be refused here as on such a cluster. The suite's own
// workloads (the echo workload, the gated pods, Kubernetes' own tests, which label their namespaces themselves)
// meet the baseline; kube-system is exempt, as on managed clusters, for the cluster DNS.

/** The level a namespace without an enforce label gets. */
export const DEFAULT_ENFORCED_LEVEL = "baseline";
/** Namespaces PodSecurity leaves alone. */
export const EXEMPT_NAMESPACES = ["kube-system"];

/** kube-apiserver's `--admission-control-config-file`: the PodSecurity plugin's cluster-wide defaults. */
export function podSecurityAdmissionConfig(): string {
  return JSON.stringify(
    {
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "AdmissionConfiguration",
      plugins: [
        {
          name: "PodSecurity",
          configuration: {
            apiVersion: "pod-security.admission.config.k8s.io/v1",
            kind: "PodSecurityConfiguration",
            defaults: {
              enforce: DEFAULT_ENFORCED_LEVEL,
              "enforce-version": "latest",
              audit: "privileged",
              "audit-version": "latest",
              warn: "privileged",
              "warn-version": "latest",
            },
            exemptions: { usernames: [], runtimeClasses: [], namespaces: EXEMPT_NAMESPACES },
          },
        },
      ],
    },
    null,
    2,
  );
}
