// `helm install`, `helm upgrade` and `helm uninstall` of the chart against the real apiserver: the release
// creates every object `helm template` shows (each owned by the release), an upgrade keeps the speakers'
// membership secret the chart made, and uninstalling removes every object of the release and Helm's own record
// of it; only the CRDs stay, as Helm keeps crds/ by design (so no custom resource is lost with a release). A
// namespace whose Pod Security label would refuse the speakers refuses the release instead.
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  loadAllYaml,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { expect, test } from "../../harness/index.ts";
import { mergePatch } from "../../harness/kube.ts";
import { CHART, chartArgs, runHelm, statusOf } from "../../harness/manifests.ts";

test("a release installs the rendered objects, keeps its memberlist secret on upgrade, and uninstalls to nothing but the CRDs", async ({
  cluster,
}) => {
  const kubeconfig = inject("kubeconfig");
  const release = `r${randomBytes(3).toString("hex")}`;
  const ns = cluster.namespace;
  // Into the test's own namespace (made before, as `namespace.create=false` expects), with the Secret made by
  // the chart so that the release holds every object the speakers need.
  const args = [
    ...chartArgs("metal"),
    ...["--set", "namespace.create=false", "--set", "speaker.memberlist.createSecret=true"],
  ];
  const helm = (...a: string[]) => runHelm([...a, "--namespace", ns], { kubeconfig });

  const install = await helm("install", release, CHART, ...args);
  expect(install.stderr).not.toMatch(/Error/);
  expect(install.code).toBe(0);
  // NOTES.txt, with this release's names, and how to label the namespace, which has no Pod Security label.
  expect(install.stdout).toContain(`rollout status daemonset/${release}-portico-speaker`);
  expect(install.stdout).toContain(
    `kubectl label namespace ${ns} pod-security.kubernetes.io/enforce=privileged --overwrite`,
  );

  const manifest = await helm("get", "manifest", release);
  const objects = (loadAllYaml(manifest.stdout) as (KubernetesObject | null)[]).filter((o) => o !== null);
  expect(objects.map((o) => o.kind).sort()).toEqual(
    [
      ...["ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole"],
      ...["ClusterRoleBinding", "ClusterRoleBinding", "ClusterRoleBinding", "ClusterRoleBinding"],
      ...["ClusterRoleBinding", "DaemonSet", "Deployment", "PodDisruptionBudget"],
      ...["Secret", "ServiceAccount", "ServiceAccount"],
      // The controller's leader election and webhook certificate, the speaker's peers' password Secrets, and
      // the speaker's own pod and DaemonSet.
      ...["Role", "Role", "Role", "Role", "RoleBinding", "RoleBinding", "RoleBinding", "RoleBinding"],
      // The readiness-gate webhook: its Service, configuration and certificate's Secret.
      ...["Service", "MutatingWebhookConfiguration", "Secret"],
      // FRR's startup files and the FRR agent's script.
      ...["ConfigMap", "ConfigMap"],
    ].sort(),
  );
  const api = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
  for (const o of objects) {
    const live = await api.read(o as KubernetesObject & { metadata: { name: string } });
    expect(live.metadata?.annotations, `${o.kind}/${o.metadata?.name}`).toMatchObject({
      "meta.helm.sh/release-name": release,
      "meta.helm.sh/release-namespace": ns,
    });
  }
  const crds = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of ["ipaddresspools.portico.io", "l2advertisements.portico.io"])
    expect(await statusOf(crds.readCustomResourceDefinition({ name: crd }))).toBe(0);

  const secretName = `${release}-portico-memberlist`;
  const secret = async () =>
    (await cluster.core.readNamespacedSecret({ name: secretName, namespace: ns })).data;
  const before = await secret();
  expect(Buffer.from(before?.secret ?? "", "base64").toString()).toMatch(/^[A-Za-z0-9]{44}$/);
  const upgrade = await helm("upgrade", release, CHART, ...args);
  expect(upgrade.code, upgrade.stderr).toBe(0);
  expect(await secret()).toEqual(before);

  const uninstall = await helm("uninstall", release, "--wait", "--timeout", "60s");
  expect(uninstall.code, uninstall.stderr).toBe(0);
  for (const o of objects) {
    const read = api.read(o as KubernetesObject & { metadata: { name: string } });
    expect(await statusOf(read), `${o.kind}/${o.metadata?.name} after uninstall`).toBe(404);
  }
  // Helm's record of the release (a Secret of type helm.sh/release.v1) is gone too.
  const records = await cluster.core.listNamespacedSecret({
    namespace: ns,
    labelSelector: `name=${release}`,
  });
  expect(records.items).toEqual([]);
  for (const crd of ["ipaddresspools.portico.io", "l2advertisements.portico.io"])
    expect(await statusOf(crds.readCustomResourceDefinition({ name: crd }))).toBe(0);
});

test("with namespace.create, the namespace Helm 4 makes (--create-namespace) gets the chart's Pod Security labels and goes with the release", async ({
  cluster,
}) => {
  const kubeconfig = inject("kubeconfig");
  const release = `r${randomBytes(3).toString("hex")}`;
  const ns = `${release}-system`;
  const helm = (...a: string[]) => runHelm([...a, "--namespace", ns], { kubeconfig });
  // Helm makes the namespace, then applies the chart's Namespace over it (server-side apply).
  const install = await helm("install", release, CHART, "--create-namespace", ...chartArgs("eks"));
  expect(install.code, install.stderr).toBe(0);
  const made = await cluster.core.readNamespace({ name: ns });
  expect(made.metadata?.labels).toMatchObject({
    "pod-security.kubernetes.io/enforce": "restricted",
    "app.kubernetes.io/instance": release,
  });
  expect(made.metadata?.annotations).toMatchObject({ "meta.helm.sh/release-name": release });

  const uninstall = await helm("uninstall", release);
  expect(uninstall.code, uninstall.stderr).toBe(0);
  // Deleted (no namespace controller runs beside this apiserver to finish emptying it).
  const gone = await cluster.core.readNamespace({ name: ns });
  expect(gone.metadata?.deletionTimestamp).toBeDefined();
});

test("a release with the speaker is refused, before anything is made, in a namespace whose Pod Security label refuses the speaker's pods", async ({
  cluster,
}) => {
  const kubeconfig = inject("kubeconfig");
  const release = `r${randomBytes(3).toString("hex")}`;
  const ns = cluster.namespace;
  const helm = (...a: string[]) => runHelm([...a, "--namespace", ns], { kubeconfig });
  const label = (level: string) =>
    cluster.core.patchNamespace(
      { name: ns, body: { metadata: { labels: { "pod-security.kubernetes.io/enforce": level } } } },
      mergePatch,
    );
  const metal = [
    ...chartArgs("metal"),
    ...["--set", "namespace.create=false", "--set", "speaker.memberlist.createSecret=true"],
  ];

  for (const level of ["baseline", "restricted"]) {
    await label(level);
    const install = await helm("install", release, CHART, ...metal);
    expect(install.code).not.toBe(0);
    expect(install.stderr).toContain(
      `namespace ${ns} enforces Pod Security level ${level} (its label pod-security.kubernetes.io/enforce), which refuses the speaker's pods`,
    );
    expect(install.stderr).toContain(
      `kubectl label namespace ${ns} pod-security.kubernetes.io/enforce=privileged --overwrite`,
    );
    // Refused while rendering: no record of the release, nothing of it in the namespace.
    expect((await helm("list", "--all", "-q")).stdout.trim()).toBe("");
    expect((await cluster.apps.listNamespacedDaemonSet({ namespace: ns })).items).toEqual([]);
    expect((await cluster.core.listNamespacedSecret({ namespace: ns })).items).toEqual([]);
  }

  // Without the speaker the controller alone meets restricted; a namespace labelled privileged takes both.
  const controllerOnly = await helm(
    ...["install", release, CHART, "--dry-run=server", ...chartArgs("metal")],
    ...["--set", "namespace.create=false", "--set", "speaker.enabled=false"],
  );
  expect(controllerOnly.code, controllerOnly.stderr).toBe(0);
  await label("privileged");
  const privileged = await helm("install", release, CHART, "--dry-run=server", ...metal);
  expect(privileged.code, privileged.stderr).toBe(0);
  // Labelled so, the namespace needs no word in NOTES.txt.
  expect(privileged.stdout).toContain(`rollout status daemonset/${release}-portico-speaker`);
  expect(privileged.stdout).not.toContain("pod-security.kubernetes.io/enforce");
});
