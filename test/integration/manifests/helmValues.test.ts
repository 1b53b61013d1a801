// The chart's values beyond the overlays' defaults: each one reaches the object it names (none is ignored), and a
// wrong value or a combination that cannot work makes helm refuse the install with the key's path and the fix,
// before anything is sent to a cluster (values.schema.json for each value, templates/_helpers.tpl's
// portico.validate for combinations).
import type { KubernetesObject, V1DaemonSet, V1Deployment, V1Secret } from "@kubernetes/client-node";
import { describe, expect, test } from "../../harness/index.ts";
import { CHART, chartArgs, find, renderChart, renderOverlay, runHelm } from "../../harness/manifests.ts";

const metal = chartArgs("metal");

function set(values: Record<string, string | number | boolean>): string[] {
  return Object.entries(values).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
}

/** The first of `items`, which the test requires to be there. */
function first<T>(items: T[] | undefined): T {
  const item = items?.[0];
  if (item === undefined) throw new Error("expected at least one item");
  return item;
}

function controllerOf(objects: KubernetesObject[], prefix = "portico"): V1Deployment {
  return find<V1Deployment & KubernetesObject>(objects, "Deployment", `${prefix}-controller`);
}

function speakerOf(objects: KubernetesObject[], prefix = "portico"): V1DaemonSet {
  return find<V1DaemonSet & KubernetesObject>(objects, "DaemonSet", `${prefix}-speaker`);
}

describe("values helm refuses, naming the key and the fix", () => {
  test.each([
    [
      "no provider",
      ["--set", "clusterName=c"],
      /at '\/provider': value must be one of 'aws', 'azure', 'metal'/,
    ],
    [
      "an unknown provider",
      set({ provider: "gcp", clusterName: "c" }),
      /at '\/provider': value must be one of/,
    ],
    ["no cluster name", set({ provider: "aws" }), /clusterName is required: .*--set clusterName=<name>/],
    [
      "a misspelt key",
      [...metal, ...set({ "controller.replica": 3 })],
      /at '\/controller': additional properties 'replica' not allowed/,
    ],
    ["no replicas", [...metal, ...set({ "controller.replicas": 0 })], /at '\/controller\/replicas': minimum/],
    [
      "a pull policy Kubernetes does not know",
      [...metal, ...set({ "image.pullPolicy": "Sometimes" })],
      /at '\/image\/pullPolicy': value must be one of '', 'Always', 'IfNotPresent', 'Never'/,
    ],
    [
      "an IRSA role that is not an IAM role ARN",
      set({ provider: "aws", clusterName: "c", "aws.roleArn": "portico-controller" }),
      /at '\/aws\/roleArn': 'portico-controller' does not match pattern/,
    ],
    [
      "a workload identity client ID that is not a GUID",
      set({ provider: "azure", clusterName: "c", "azure.workloadIdentity.clientId": "portico" }),
      /at '\/azure\/workloadIdentity\/clientId': 'portico' does not match pattern/,
    ],
    [
      "azure without its cloud config",
      set({ provider: "azure", clusterName: "c" }),
      /azure.cloudConfig is required with provider azure: --set-file azure.cloudConfig=azure.json/,
    ],
    [
      "an AWS setting with another provider",
      [...metal, ...set({ "aws.region": "us-east-1" })],
      /aws.region and aws.roleArn apply to provider aws only \(provider is metal\): remove them/,
    ],
    [
      "an Azure setting with another provider",
      set({
        provider: "aws",
        clusterName: "c",
        "azure.workloadIdentity.clientId": "00000000-0000-0000-0000-000000000000",
      }),
      /azure.workloadIdentity.clientId and azure.cloudConfig apply to provider azure only \(provider is aws\)/,
    ],
    [
      "an azure.json that is not JSON",
      [
        "--set",
        "provider=azure",
        "--set",
        "clusterName=c",
        "--set-string",
        "azure.cloudConfig=location: westeurope",
      ],
      /azure.cloudConfig is not JSON \(.*\): give azure.json's text/,
    ],
    [
      "a memberlist Secret for a speaker that does not run",
      [...metal, ...set({ "speaker.enabled": false, "speaker.memberlist.createSecret": true })],
      /speaker.memberlist.createSecret=true, but no speaker runs/,
    ],
    [
      "speaker flags with a cloud provider",
      ["--set", "provider=aws", "--set", "clusterName=c", "--set", "speaker.extraArgs={--interfaces=eth0}"],
      /speaker.extraArgs is set, but no speaker runs/,
    ],
    [
      "the speaker with a cloud provider",
      set({ provider: "aws", clusterName: "c", "speaker.enabled": true }),
      /speaker.enabled=true needs provider metal \(provider is aws\)/,
    ],
    [
      "a controller flag the chart sets",
      [...metal, "--set", "controller.extraArgs={--cluster-name=other}"],
      /controller.extraArgs: --cluster-name is set by the chart: set the value clusterName instead/,
    ],
    [
      "a speaker flag the chart sets",
      [...metal, "--set", "speaker.extraArgs={--memberlist-port=1}"],
      /speaker.extraArgs: --memberlist-port is set by the chart: set the value speaker.memberlistPort instead/,
    ],
    [
      "an argument that is not a flag",
      [...metal, "--set", "controller.extraArgs={portico}"],
      /at '\/controller\/extraArgs\/0': 'portico' does not match pattern '\^--'/,
    ],
    [
      "a port beyond 65535",
      [...metal, ...set({ "speaker.metricsPort": 70000 })],
      /speaker\/metricsPort': maximum/,
    ],
    [
      "the FRR directory in the speaker's flags",
      [...metal, "--set", "speaker.extraArgs={--frr-config-dir=/tmp/frr}"],
      /speaker.extraArgs: --frr-config-dir is set by the chart: set the value speaker.frr.enabled instead/,
    ],
    [
      "an FRR image without a tag",
      [...metal, ...set({ "speaker.frr.image.tag": "" })],
      /at '\/speaker\/frr\/image\/tag': minLength/,
    ],
    [
      "a misspelt FRR key",
      [...metal, ...set({ "speaker.frr.enable": false })],
      /at '\/speaker\/frr': additional properties 'enable' not allowed/,
    ],
  ])("%s", async (_, args, message) => {
    const result = await runHelm(["template", "portico", CHART, ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });
});

describe("values that reach the objects", () => {
  test("the image, its tag and pull policy, and pull secrets, for the controller and the speaker alike", async () => {
    const objects = await renderChart([
      ...metal,
      ...set({ "image.repository": "registry.example/portico", "image.tag": "1.2.3" }),
      ...set({ "image.pullPolicy": "IfNotPresent", "imagePullSecrets[0].name": "regcred" }),
    ]);
    for (const pod of [controllerOf(objects).spec!.template.spec!, speakerOf(objects).spec!.template.spec!]) {
      expect(first(pod.containers)).toMatchObject({
        image: "registry.example/portico:1.2.3",
        imagePullPolicy: "IfNotPresent",
      });
      expect(pod.imagePullSecrets).toEqual([{ name: "regcred" }]);
    }
  });

  test("placement and priority of each component, and the controller's replicas, args, env and labels", async () => {
    const objects = await renderChart([
      ...metal,
      ...set({ "controller.replicas": 3, "controller.priorityClassName": "high" }),
      ...set({ "controller.nodeSelector.role": "infra", "controller.tolerations[0].key": "infra" }),
      ...set({ "controller.tolerations[0].operator": "Exists", "controller.podLabels.team": "net" }),
      ...set({
        "controller.extraEnv[0].name": "HTTPS_PROXY",
        "controller.extraEnv[0].value": "http://proxy:3128",
      }),
      ...["--set", "controller.extraArgs={--workers=8}", "--set", "speaker.extraArgs={--interfaces=eth0}"],
      ...set({ "speaker.priorityClassName": "", "speaker.nodeSelector.lan": "yes" }),
      ...set({
        "speaker.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key":
          "lan",
      }),
      ...set({
        "speaker.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator":
          "Exists",
      }),
      ...set({ "speaker.resources.limits.memory": "1Gi", "speaker.tolerations": "null" }),
    ]);
    const c = controllerOf(objects);
    expect(c.spec!.replicas).toBe(3);
    const pod = c.spec!.template.spec!;
    expect(pod.priorityClassName).toBe("high");
    expect(pod.nodeSelector).toEqual({ "kubernetes.io/os": "linux", role: "infra" });
    expect(pod.tolerations).toEqual([{ key: "infra", operator: "Exists" }]);
    expect(c.spec!.template.metadata!.labels).toMatchObject({ team: "net" });
    expect(c.spec!.selector.matchLabels).not.toHaveProperty("team");
    expect(first(pod.containers).args?.at(-1)).toBe("--workers=8");
    expect(first(pod.containers).env).toContainEqual({ name: "HTTPS_PROXY", value: "http://proxy:3128" });

    const s = speakerOf(objects).spec!.template.spec!;
    expect(s.priorityClassName).toBeUndefined();
    expect(s.nodeSelector).toEqual({ "kubernetes.io/os": "linux", lan: "yes" });
    expect(s.tolerations).toBeUndefined();
    expect(
      s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: "lan", operator: "Exists" }] }]);
    expect(first(s.containers).resources?.limits).toEqual({ memory: "1Gi" });
    expect(first(s.containers).args?.at(-1)).toBe("--interfaces=eth0");
  });

  test("one replica gets no PodDisruptionBudget, which would block every drain", async () => {
    const objects = await renderChart([...metal, ...set({ "controller.replicas": 1 })]);
    expect(objects.filter((o) => o.kind === "PodDisruptionBudget")).toEqual([]);
  });

  test("a release of another name: every name prefixed, and every reference follows", async () => {
    const objects = await renderChart([...metal, ...set({ "speaker.memberlist.createSecret": true })], {
      release: "lan",
      namespace: "lan-lb",
    });
    for (const o of objects) {
      if (o.kind !== "Namespace") expect(o.metadata!.name).toMatch(/^lan-portico-/);
      expect(o.metadata!.labels?.["app.kubernetes.io/instance"]).toBe("lan");
    }
    expect(controllerOf(objects, "lan-portico").spec!.template.spec!.serviceAccountName).toBe(
      "lan-portico-controller",
    );
    const speaker = speakerOf(objects, "lan-portico").spec!.template.spec!;
    expect(speaker.serviceAccountName).toBe("lan-portico-speaker");
    expect(first(speaker.volumes).secret?.secretName).toBe("lan-portico-memberlist");
    for (const binding of objects.filter((o) => o.kind?.endsWith("RoleBinding"))) {
      const b = binding as KubernetesObject & {
        roleRef: { kind: string; name: string };
        subjects: { name: string; namespace: string }[];
      };
      expect(find(objects, b.roleRef.kind === "Role" ? "Role" : "ClusterRole", b.roleRef.name)).toBeDefined();
      for (const s of b.subjects) {
        expect(find(objects, "ServiceAccount", s.name)).toBeDefined();
        expect(s.namespace).toBe("lan-lb");
      }
    }
  });

  test("another load-balancer class and host ports reach the controller and the speaker", async () => {
    const objects = await renderChart([
      ...metal,
      ...set({
        loadBalancerClass: "example.com/lan",
        "speaker.metricsPort": 7572,
        "speaker.memberlistPort": 8046,
      }),
    ]);
    expect(first(controllerOf(objects).spec!.template.spec!.containers).args).toContain(
      "--load-balancer-class=example.com/lan",
    );
    const speaker = first(speakerOf(objects).spec!.template.spec!.containers);
    expect(speaker.args).toEqual(
      expect.arrayContaining([
        "--load-balancer-class=example.com/lan",
        "--metrics-address=:7572",
        "--memberlist-port=8046",
      ]),
    );
    expect(speaker.ports).toEqual([
      { name: "metrics", containerPort: 7572, protocol: "TCP" },
      { name: "memberlist", containerPort: 8046, protocol: "UDP" },
      { name: "memberlist-tcp", containerPort: 8046, protocol: "TCP" },
    ]);
  });

  test("the memberlist Secret, when the chart makes it: 44 random characters, new for each render without a cluster", async () => {
    const render = () => renderChart([...metal, ...set({ "speaker.memberlist.createSecret": true })]);
    const secrets = [await render(), await render()].map((objects) =>
      Buffer.from(
        find<V1Secret & KubernetesObject>(objects, "Secret", "portico-memberlist").data!.secret!,
        "base64",
      ).toString(),
    );
    for (const s of secrets) expect(s).toMatch(/^[A-Za-z0-9]{44}$/);
    expect(secrets[0]).not.toBe(secrets[1]);
    expect(
      (await renderChart(metal)).filter((o) => o.kind === "Secret").map((o) => o.metadata!.name),
    ).toEqual(["portico-webhook-cert"]);
  });

  test("readiness gates: the webhook's failure policy, every namespace or the labelled ones, cert-manager's certificate instead of the controller's, or none", async () => {
    const eks = chartArgs("eks");
    const webhookObjects = (objects: KubernetesObject[]) =>
      objects
        .filter((o) => /webhook|readiness-gates/.test(o.metadata!.name!))
        .map((o) => `${o.kind}/${o.metadata!.name}`)
        .sort();
    const policies = (objects: KubernetesObject[]) =>
      Object.fromEntries(
        find<KubernetesObject & { webhooks: { name: string; failurePolicy: string }[] }>(
          objects,
          "MutatingWebhookConfiguration",
          "portico-readiness-gates",
        ).webhooks.map((w) => [w.name, w.failurePolicy]),
      );
    // The policy is the labelled namespaces'; the others' entry never holds a pod back.
    expect(
      policies(await renderChart([...eks, ...set({ "readinessGates.failurePolicy": "Ignore" })])),
    ).toEqual({
      "pods.readiness-gates.portico.io": "Ignore",
      "pods.lbc-readiness-gates.portico.io": "Ignore",
      "pods.default-readiness-gates.portico.io": "Ignore",
    });
    expect(policies(await renderChart(eks))).toEqual({
      "pods.readiness-gates.portico.io": "Fail",
      "pods.lbc-readiness-gates.portico.io": "Fail",
      "pods.default-readiness-gates.portico.io": "Ignore",
    });
    // Only the labelled namespaces, when asked; and on bare metal, where no pod waits for a load balancer.
    const labelledOnly = {
      "pods.readiness-gates.portico.io": "Fail",
      "pods.lbc-readiness-gates.portico.io": "Fail",
    };
    expect(policies(await renderChart([...eks, ...set({ "readinessGates.everyNamespace": false })]))).toEqual(
      labelledOnly,
    );
    expect(policies(await renderChart(metal))).toEqual(labelledOnly);

    const certManager = await renderChart([...eks, ...set({ "readinessGates.certManager.enabled": true })]);
    expect(webhookObjects(certManager)).toEqual([
      "Certificate/portico-webhook",
      "Issuer/portico-webhook",
      "MutatingWebhookConfiguration/portico-readiness-gates",
      "Service/portico-webhook",
    ]);
    expect(
      find(certManager, "MutatingWebhookConfiguration", "portico-readiness-gates").metadata!.annotations,
    ).toEqual({ "cert-manager.io/inject-ca-from": "portico-system/portico-webhook" });
    const pod = controllerOf(certManager).spec!.template.spec!;
    expect(pod.containers[0]!.args).toContain("--webhook-cert-dir=/var/run/portico/webhook-cert");
    expect(pod.volumes).toEqual([{ name: "webhook-cert", secret: { secretName: "portico-webhook-cert" } }]);
    const issuer = await renderChart([
      ...eks,
      ...set({
        "readinessGates.certManager.enabled": true,
        "readinessGates.certManager.issuerRef.name": "corp-ca",
        "readinessGates.certManager.issuerRef.kind": "ClusterIssuer",
      }),
    ]);
    expect(webhookObjects(issuer)).not.toContain("Issuer/portico-webhook");
    expect(
      find<KubernetesObject & { spec: { issuerRef: unknown } }>(issuer, "Certificate", "portico-webhook").spec
        .issuerRef,
    ).toEqual({
      name: "corp-ca",
      kind: "ClusterIssuer",
    });

    const off = await renderChart([...eks, ...set({ "readinessGates.enabled": false })]);
    expect(webhookObjects(off)).toEqual([]);
    const container = controllerOf(off).spec!.template.spec!.containers[0]!;
    expect(container.env?.map((e) => e.name)).not.toContain("PORTICO_WEBHOOK_ADDRESS");
    expect(container.ports?.map((p) => p.name)).toEqual(["metrics"]);
  });

  test("the speaker can be left out on metal, and the namespace then needs only the restricted level", async () => {
    const objects = await renderChart([...metal, ...set({ "speaker.enabled": false })]);
    expect(objects.filter((o) => o.metadata!.name!.includes("speaker"))).toEqual([]);
    expect(find(objects, "Namespace", "portico-system").metadata!.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "restricted",
    });
  });

  test("azure.json as a map of keys; another content gets another ConfigMap name, so the controller rolls", async () => {
    const names = [];
    for (const location of ["westeurope", "northeurope"]) {
      const objects = await renderChart(
        set({
          provider: "azure",
          clusterName: "c",
          "azure.cloudConfig.location": location,
          "azure.cloudConfig.resourceGroup": "rg",
        }),
      );
      const configMap = objects.find((o) => o.kind === "ConfigMap") as KubernetesObject & {
        data: Record<string, string>;
      };
      expect(JSON.parse(configMap.data["azure.json"] ?? "")).toEqual({ location, resourceGroup: "rg" });
      const volume = first(controllerOf(objects).spec!.template.spec!.volumes);
      expect(volume.configMap?.name).toBe(configMap.metadata!.name);
      names.push(configMap.metadata!.name!);
    }
    expect(names[0]).toMatch(/^portico-azure-config-[a-z0-9]{10}$/);
    expect(names[1]).not.toBe(names[0]);
  });

  test("FRR's image, its tag and pull policy reach FRR's three containers, and Portico's image stays", async () => {
    const objects = await renderChart([
      ...metal,
      ...set({ "image.repository": "registry.example/portico", "image.tag": "1.2.3" }),
      ...set({ "speaker.frr.image.repository": "mirror.example/frr", "speaker.frr.image.tag": "8.4.7" }),
      ...set({ "speaker.frr.image.pullPolicy": "IfNotPresent" }),
    ]);
    const pod = speakerOf(objects).spec!.template.spec!;
    const images = [...(pod.initContainers ?? []), ...pod.containers].map((c) => [
      c.name,
      c.image,
      c.imagePullPolicy,
    ]);
    expect(images).toEqual([
      ["frr-files", "mirror.example/frr:8.4.7", "IfNotPresent"],
      ["speaker", "registry.example/portico:1.2.3", undefined],
      ["frr", "mirror.example/frr:8.4.7", "IfNotPresent"],
      ["frr-agent", "mirror.example/frr:8.4.7", "IfNotPresent"],
    ]);
    // By default upstream's 8.4 image, as the metal overlay names it.
    const defaults = speakerOf(await renderChart(metal)).spec!.template.spec!;
    expect(defaults.containers.map((c) => c.image)).toEqual([
      "portico",
      "quay.io/frrouting/frr:8.4.2",
      "quay.io/frrouting/frr:8.4.2",
    ]);
  });

  test("the BGP mode can be turned off: no FRR, no FRR directory, no BGP RBAC and no Secrets read", async () => {
    const on = await renderChart(metal);
    const objects = await renderChart([...metal, ...set({ "speaker.frr.enabled": false })]);
    const pod = speakerOf(objects).spec!.template.spec!;
    expect(pod.containers.map((c) => c.name)).toEqual(["speaker"]);
    expect(pod.initContainers).toBeUndefined();
    expect(pod.volumes?.map((v) => v.name)).toEqual(["memberlist"]);
    const speaker = first(pod.containers);
    expect(speaker.args?.filter((a) => a.startsWith("--frr-config-dir"))).toEqual([]);
    expect(speaker.env?.map((e) => e.name)).toEqual(["NODE_NAME", "POD_NAME", "POD_NAMESPACE"]);
    expect(speaker.volumeMounts?.map((m) => m.name)).toEqual(["memberlist"]);
    const kinds = (list: KubernetesObject[]) => list.map((o) => `${o.kind}/${o.metadata!.name}`).sort();
    const gone = kinds(on).filter((k) => !kinds(objects).includes(k));
    expect(gone).toEqual([
      `ConfigMap/${on.find((o) => o.metadata!.name!.startsWith("portico-frr-agent-"))!.metadata!.name}`,
      "ConfigMap/portico-frr-startup",
      "Role/portico-speaker-secrets",
      "RoleBinding/portico-speaker-secrets",
    ]);
    const role = find<KubernetesObject & { rules: { apiGroups: string[]; resources: string[] }[] }>(
      objects,
      "ClusterRole",
      "portico-speaker",
    );
    const resources = role.rules.flatMap((r) => r.resources.map((res) => `${r.apiGroups.join()}/${res}`));
    expect(resources.filter((r) => /bgp|bfd/.test(r))).toEqual([]);
    expect(resources).toContain("metallb.io/l2advertisements");
  });

  test("the speaker's FRR ConfigMaps follow the release's name, and the agent's name follows its script", async () => {
    const objects = await renderChart(metal, { release: "lan", namespace: "lan-lb" });
    const pod = speakerOf(objects, "lan-portico").spec!.template.spec!;
    const maps = (pod.volumes ?? []).flatMap((v) => (v.configMap ? [v.configMap.name!] : []));
    expect(maps).toEqual([
      "lan-portico-frr-startup",
      expect.stringMatching(/^lan-portico-frr-agent-[a-z0-9]{10}$/) as string,
    ]);
    for (const name of maps) expect(find(objects, "ConfigMap", name).metadata!.namespace).toBe("lan-lb");
    // The same script as the metal overlay's ConfigMap, under the same hashed name.
    const overlayName = (await renderOverlay("metal")).find(
      (o) => o.kind === "ConfigMap" && o.metadata!.name!.startsWith("portico-frr-agent-"),
    )!.metadata!.name!;
    expect(maps[1]).toBe(`lan-${overlayName}`);
  });

  test("by default no Namespace: the release's namespace is Helm's to make (--create-namespace)", async () => {
    const objects = await renderChart(set({ provider: "metal", clusterName: "c" }), { namespace: "lan-lb" });
    expect(objects.filter((o) => o.kind === "Namespace")).toEqual([]);
    expect(objects.every((o) => ["lan-lb", undefined].includes(o.metadata!.namespace))).toBe(true);
  });
});
