// Every object of every overlay, as `kubectl apply -k manifests/overlays/<name>` would send it, is accepted
// by the real apiserver (server-side dry run: full validation and admission, nothing stored), and the pods
// the workloads would start pass its admission too (Pod Security, ServiceAccount, priority class). The
// arguments each container gets are parsed by the programs' own flag parsers.
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Container,
  V1Namespace,
  V1ServiceAccount,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig as parseControllerConfig } from "../../../controller/config.ts";
import { parseConfig as parseSpeakerConfig } from "../../../speaker/config.ts";
import { describe, expect, test, type TestCluster } from "../../harness/index.ts";
import {
  apiError,
  apply,
  find,
  installCrds,
  MANIFESTS,
  OVERLAYS,
  relocate,
  renderOverlay,
  type Overlay,
} from "../../harness/manifests.ts";
import { argsWithMountedFiles, downwardEnv, workload, workloads, type Workload } from "./pods.ts";

/** Renders the overlay into the test's namespace and applies what a dry run needs to exist for real. */
async function prepare(cluster: TestCluster, overlay: Overlay): Promise<KubernetesObject[]> {
  const rendered = await renderOverlay(overlay);
  await installCrds(cluster.kubeConfig, rendered);
  const objects = relocate(rendered, cluster.namespace, randomBytes(3).toString("hex"));
  // Pods are admitted against their namespace's Pod Security labels and need their ServiceAccount to exist.
  const real = objects.filter((o) => o.kind === "Namespace" || o.kind === "ServiceAccount");
  expect(await apply(cluster.kubeConfig, real, { dryRun: false })).toEqual([]);
  return objects;
}

/** Creates the workload's pod as a dry run: the apiserver admits it (or not) exactly as the real one. */
async function dryRunPod(cluster: TestCluster, w: Workload): Promise<void> {
  await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    dryRun: "All",
    body: {
      metadata: { name: `${w.name}-dry-run`, labels: w.template.metadata?.labels },
      spec: w.template.spec!,
    },
  });
}

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  test("every object is accepted by the apiserver, and the pods it makes are admitted", async ({
    cluster,
  }) => {
    const objects = await prepare(cluster, overlay);
    const rest = objects.filter((o) => o.kind !== "CustomResourceDefinition");
    expect(await apply(cluster.kubeConfig, rest, { dryRun: true })).toEqual([]);
    for (const w of workloads(objects)) {
      await dryRunPod(cluster, w).catch((err: unknown) => {
        throw new Error(`${w.kind} ${w.name}'s pod was refused: ${apiError(err).message}`);
      });
    }
  });

  test("the controller runs two leader-electing replicas, probed on its metrics port, locked down", async () => {
    const objects = await renderOverlay(overlay);
    const c = workload(objects, "portico-controller");
    const deployment = find<{ spec: { replicas: number } } & KubernetesObject>(
      objects,
      "Deployment",
      "portico-controller",
    );
    expect(deployment.spec.replicas).toBe(2);

    const env = downwardEnv(c.container, { namespace: "portico-system", nodeName: "n", podName: "p" });
    const config = parseControllerConfig(await argsWithMountedFiles(objects, c), env);
    expect(config.leaderElection).toMatchObject({ enabled: true, namespace: "portico-system" });
    const metricsPort = Number(config.metricsAddress.split(":").pop());
    const port = c.container.ports?.find((p) => p.name === "metrics");
    expect(port?.containerPort).toBe(metricsPort);
    expect(c.container.livenessProbe?.httpGet).toMatchObject({ path: "/healthz", port: "metrics" });
    expect(c.container.readinessProbe?.httpGet).toMatchObject({ path: "/readyz", port: "metrics" });
    expect(Object.keys(c.container.resources?.requests ?? {}).sort()).toEqual(["cpu", "memory"]);
    expect(Object.keys(c.container.resources?.limits ?? {})).toEqual(["memory"]);
    expect(c.template.spec!.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(c.template.spec!.serviceAccountName).toBe("portico-controller");

    // The disruption budget covers exactly the controller's pods.
    const pdb = find<
      { spec: { minAvailable: number; selector: { matchLabels: object } } } & KubernetesObject
    >(objects, "PodDisruptionBudget", "portico-controller");
    expect(pdb.spec.minAvailable).toBe(1);
    expect(c.template.metadata?.labels).toMatchObject(pdb.spec.selector.matchLabels);
  });
});

test("eks: AWS NLBs, with the IAM role reaching the pods through the ServiceAccount", async () => {
  const objects = await renderOverlay("eks");
  const sa = find<V1ServiceAccount>(objects, "ServiceAccount", "portico-controller");
  expect(sa.metadata!.annotations!["eks.amazonaws.com/role-arn"]).toMatch(/^arn:aws:iam::\d{12}:role\/.+/);
  const c = workload(objects, "portico-controller");
  const config = parseControllerConfig(await argsWithMountedFiles(objects, c), {});
  expect(config).toMatchObject({ provider: "aws", loadBalancerClass: "portico.io/aws-nlb" });
  expect(config.clusterName).toMatch(/^[a-z0-9-]+$/);
  expect((config.settings as { region?: string }).region).toMatch(/^[a-z]{2}(-[a-z]+)+-\d$/);
  // No static credentials anywhere: they come from IRSA or EKS Pod Identity.
  expect(JSON.stringify(objects)).not.toMatch(/AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY/);
  expect(existsSync(join(MANIFESTS, "aws", "iam-policy.json"))).toBe(true);
  expect(objects.map((o) => o.kind)).not.toContain("DaemonSet");
  expect(objects.map((o) => o.kind)).not.toContain("CustomResourceDefinition");
});

test("aks: Azure load balancers, with workload identity and the cloud config mounted from a ConfigMap", async () => {
  const objects = await renderOverlay("aks");
  const sa = find<V1ServiceAccount>(objects, "ServiceAccount", "portico-controller");
  expect(sa.metadata!.annotations!["azure.workload.identity/client-id"]).toMatch(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  );
  const c = workload(objects, "portico-controller");
  expect(c.template.metadata!.labels!["azure.workload.identity/use"]).toBe("true");
  // The controller reads the Azure config through the mount, exactly as the pod would.
  const config = parseControllerConfig(await argsWithMountedFiles(objects, c), {});
  expect(config).toMatchObject({ provider: "azure", loadBalancerClass: "portico.io/azure-lb" });
  const keys = ["subscriptionId", "resourceGroup", "location", "vnetName", "subnetName", "securityGroupName"];
  const azure = config.settings as Record<string, unknown>;
  for (const key of keys) expect(azure[key], key).toBeTruthy();
  expect(azure).not.toHaveProperty("aadClientSecret");
  expect(existsSync(join(MANIFESTS, "azure", "role-definition.json"))).toBe(true);
  expect(objects.map((o) => o.kind)).not.toContain("DaemonSet");
});

test("metal: the pool and advertisement CRDs, and a speaker on every node with the host network and CAP_NET_RAW only", async () => {
  const objects = await renderOverlay("metal");
  expect(find(objects, "CustomResourceDefinition", "ipaddresspools.portico.io")).toBeDefined();
  expect(find(objects, "CustomResourceDefinition", "l2advertisements.portico.io")).toBeDefined();
  const controller = parseControllerConfig(
    await argsWithMountedFiles(objects, workload(objects, "portico-controller")),
    {},
  );
  expect(controller).toMatchObject({ provider: "metal", loadBalancerClass: "portico.io/metal" });
  // MetalLB's pools and advertisements are read where MetalLB keeps them, when its CRDs are installed.
  expect((controller.settings as { metallb: unknown }).metallb).toEqual({
    mode: "auto",
    namespace: "metallb-system",
  });

  const s = workload(objects, "portico-speaker");
  expect(s.kind).toBe("DaemonSet");
  const pod = s.template.spec!;
  expect(pod.hostNetwork).toBe(true);
  expect(pod.serviceAccountName).toBe("portico-speaker");
  expect(pod.tolerations).toContainEqual({
    key: "node-role.kubernetes.io/control-plane",
    operator: "Exists",
    effect: "NoSchedule",
  });
  expect(s.container.securityContext).toMatchObject({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"], add: ["NET_RAW"] },
  });
  expect(s.container.livenessProbe?.httpGet).toMatchObject({ path: "/healthz", port: "metrics" });
  expect(s.container.readinessProbe?.httpGet).toMatchObject({ path: "/readyz", port: "metrics" });
  // NODE_NAME from the downward API; the speaker's own parser reads it, the ports and the secret file.
  expect(s.container.env).toContainEqual({
    name: "NODE_NAME",
    valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } },
  });
  const env = downwardEnv(s.container, { namespace: "portico-system", nodeName: "node-a", podName: "p" });
  const speaker = parseSpeakerConfig(await argsWithMountedFiles(objects, s, "shared"), env);
  expect(speaker).toMatchObject({
    nodeName: "node-a",
    loadBalancerClass: "portico.io/metal",
    metallb: { mode: "auto", namespace: "metallb-system" },
  });
  expect(speaker.memberlist.secret?.toString()).toBe("shared");
  expect(s.container.ports).toContainEqual({
    name: "memberlist",
    containerPort: speaker.memberlist.port,
    protocol: "UDP",
  });
  expect(s.container.ports).toContainEqual({
    name: "metrics",
    containerPort: Number(speaker.metricsAddress.split(":").pop()),
    protocol: "TCP",
  });
  const ns = find<V1Namespace>(objects, "Namespace", "portico-system");
  expect(ns.metadata!.labels!["pod-security.kubernetes.io/enforce"]).toBe("privileged");
});

test("metal: the speaker runs in the BGP mode, with FRR and the FRR agent beside it sharing its directory", async () => {
  const objects = await renderOverlay("metal");
  const s = workload(objects, "portico-speaker");
  const pod = s.template.spec!;
  const volume = (name: string) => pod.volumes?.find((v) => v.name === name);
  const mountOf = (c: V1Container, path: string) => c.volumeMounts?.find((m) => m.mountPath === path)?.name;
  const [frr, agent] = s.sidecars as [V1Container, V1Container];

  // The speaker: BGP mode into a directory of the pod, and its own namespace for the peers' Secrets.
  const env = downwardEnv(s.container, { namespace: "team-lb", nodeName: "node-a", podName: "p" });
  const speaker = parseSpeakerConfig(await argsWithMountedFiles(objects, s, "shared"), env);
  expect(speaker.bgp).toEqual({ frrDir: "/etc/portico-frr", secretNamespace: "team-lb" });
  const shared = mountOf(s.container, speaker.bgp!.frrDir);
  expect(volume(shared!)?.emptyDir).toEqual({});

  // The agent reads and writes the same directory and reaches FRR's vty sockets in another shared one.
  const agentEnv = downwardEnv(agent, { namespace: "team-lb", nodeName: "node-a", podName: "p" });
  expect(mountOf(agent, agentEnv.PORTICO_FRR_DIR!)).toBe(shared);
  const sockets = mountOf(agent, agentEnv.FRR_VTY_SOCKET!);
  expect(sockets).toBeDefined();
  expect(mountOf(frr, "/var/run/frr")).toBe(sockets);
  expect(volume(sockets!)?.emptyDir).toEqual({});
  // It runs the script of manifests/speaker/frr, from a ConfigMap kustomize generates from it.
  const [tini, separator, interpreter, script] = agent.command as [string, string, string, string];
  expect([tini, separator, interpreter]).toEqual(["/sbin/tini", "--", "python3"]);
  const scriptDir = script.slice(0, script.lastIndexOf("/"));
  const agentMap = volume(mountOf(agent, scriptDir)!)?.configMap?.name;
  expect(find<V1ConfigMap>(objects, "ConfigMap", agentMap!).data).toEqual({
    [script.slice(scriptDir.length + 1)]: readFileSync(
      join(MANIFESTS, "speaker", "frr", "portico-frr-agent.py"),
      "utf8",
    ),
  });
  expect(agent.securityContext).toMatchObject({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"], add: ["CHOWN", "DAC_OVERRIDE"] },
  });

  // FRR: as upstream's image is started, with the capabilities its daemons keep, and bgpd and bfdd enabled
  // by the daemons file its init container copies into its /etc/frr.
  expect(frr.image).toMatch(/^quay\.io\/frrouting\/frr:8\.4\.\d+$/);
  expect(frr.command).toEqual(["/bin/sh", "-c", "/sbin/tini -- /usr/lib/frr/docker-start"]);
  expect(frr.securityContext).toEqual({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { add: ["NET_ADMIN", "NET_BIND_SERVICE", "NET_RAW", "SYS_ADMIN"] },
  });
  const etc = mountOf(frr, "/etc/frr");
  const init = pod.initContainers?.find((c) => mountOf(c, "/etc/frr") === etc);
  expect(init?.image).toBe(frr.image);
  const startup = find<V1ConfigMap>(
    objects,
    "ConfigMap",
    volume(mountOf(init!, "/tmp/frr")!)!.configMap!.name!,
  );
  const enabled = [...startup.data!.daemons!.matchAll(/^(\w+)=yes$/gm)].map((m) => m[1]);
  expect(enabled).toEqual(["bgpd", "bfdd", "vtysh_enable"]);
  expect(startup.data!["vtysh.conf"]).toBe("service integrated-vtysh-config\n");
  // Every path FRR writes is a volume: its root filesystem stays read-only.
  for (const path of ["/var/run/frr", "/etc/frr", "/var/tmp/frr", "/var/lib/frr"])
    expect(volume(mountOf(frr, path)!)?.emptyDir, path).toEqual({});
});

test("the base namespace's restricted Pod Security level is enforced: the speaker's pod is refused there", async ({
  cluster,
}) => {
  // The eks overlay's namespace (restricted) with the metal overlay's speaker: the admission that lets the
  // speaker in under metal is real, and so is the controller's compliance with restricted above.
  await prepare(cluster, "eks");
  const metal = relocate(await renderOverlay("metal"), cluster.namespace, "unused");
  const serviceAccount = metal.filter(
    (o) => o.kind === "ServiceAccount" && o.metadata!.name === "portico-speaker",
  );
  expect(await apply(cluster.kubeConfig, serviceAccount, { dryRun: false })).toEqual([]);
  const refused = await dryRunPod(cluster, workload(metal, "portico-speaker")).then(
    () => undefined,
    (err: unknown) => apiError(err),
  );
  expect(refused?.code).toBe(403);
  expect(refused?.message).toMatch(/violates PodSecurity "restricted:latest".*host namespaces.*NET_RAW/);
});
