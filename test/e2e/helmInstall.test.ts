// Portico installed as users of MetalLB, Cilium and the AWS Load Balancer Controller install theirs: `helm install`
// of manifests/charts/portico for bare metal on the local cluster, with the image built from the Dockerfile, as
// docs/installation.md says: the namespace made and labelled for Pod Security's privileged level first, then the
// release installed into it. The local cluster enforces the baseline level wherever a namespace says nothing
// (localCluster/podSecurity.ts), as hardened clusters do, so the speakers run only because of that label: the
// test first shows the apiserver refusing the chart's speaker pod in the namespace as `kubectl create namespace`
// (or Helm's --create-namespace) makes it. The suite's own Portico (the metal overlay, class portico.io/metal)
// keeps running beside it, so the release is a second installation, as a cluster with two installations would
// set it up: its own class, namespace, host ports for its speakers, and a pool for its namespace only. A Service
// of its class gets an address from that pool, announced by the release's speakers, and the LAN's client reaches
// the pods through it. Then `helm uninstall` removes every object of the release; the CRDs stay, as Helm keeps
// crds/ by design (here they were there before: the suite's overlay installed them, so the release never owned
// them), and so does the namespace, which the user made, holding only the controller's leader-election Lease
// (made by the controller at run time, not by Helm).
import {
  CoordinationV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  loadAllYaml,
  type KubernetesObject,
  type V1DaemonSet,
} from "@kubernetes/client-node";
import { Address4 } from "ip-address";
import { onTestFinished } from "vitest";
import { clientGet, describe, expect, test, waitFor, type EchoAnswer } from "../harness/e2e.ts";
import { waitForRollout } from "../harness/localCluster/install.ts";
import { mergePatch } from "../harness/kube.ts";
import { apiError, CHART, runHelm, statusOf } from "../harness/manifests.ts";

const RELEASE = "helm-e2e";
/** Where the release runs: a namespace made and labelled before `helm install`, as docs/installation.md says. */
const NAMESPACE = "portico-helm";
const ENFORCE = "pod-security.kubernetes.io/enforce";
const CLASS = "portico.io/metal-helm";
/** On the LAN (192.0.2.0/24), away from the suite's pool (192.0.2.240/28) and the hosts' own addresses. */
const POOL = { name: "helm-e2e", cidr: "192.0.2.224/28" };

describe("helm install of the chart for metal", () => {
  test("a Service gets an address from a pool and answers the LAN's client; helm uninstall removes every object of the release", async ({
    ns,
  }) => {
    const kubeconfig = ns.context.kubeconfig;
    const helm = (...args: string[]) => runHelm([...args, "--namespace", NAMESPACE], { kubeconfig });
    const image = ns.context.porticoImage;
    const at = image.lastIndexOf(":");
    const pools = ns.kc.makeApiClient(CustomObjectsApi);
    const pool = { group: "portico.io", version: "v1alpha1", plural: "ipaddresspools", name: POOL.name };
    await pools.createClusterCustomObject({
      ...pool,
      body: {
        apiVersion: "portico.io/v1alpha1",
        kind: "IPAddressPool",
        metadata: { name: POOL.name },
        // This namespace's only: the suite's controller never hands its addresses to anyone else, and the
        // release's controller, confined to this namespace, sees the whole pool and keeps its status.
        spec: { addresses: [POOL.cidr], serviceAllocation: { namespaces: [ns.name] } },
      },
    });
    onTestFinished(async () => {
      await pools.deleteClusterCustomObject(pool).catch(() => undefined);
    });

    const values = [
      ...["--set", "provider=metal", "--set", "clusterName=local"],
      ...[
        "--set-string",
        `image.repository=${image.slice(0, at)}`,
        "--set-string",
        `image.tag=${image.slice(at + 1)}`,
      ],
      ...["--set", `loadBalancerClass=${CLASS}`, "--set", "speaker.memberlist.createSecret=true"],
      // The suite's speakers hold 7472 and 7946 on every node's host network, and its FRR the node's routing.
      ...["--set", "speaker.metricsPort=7572", "--set", "speaker.memberlistPort=8046"],
      ...["--set", "speaker.frr.enabled=false"],
      ...["--set", `controller.extraArgs={--namespace=${ns.name}}`],
      ...["--set", `speaker.extraArgs={--namespace=${ns.name}}`],
    ];

    // `kubectl create namespace portico-helm`: a namespace with no Pod Security label, which the cluster holds to
    // the baseline level. The chart's speaker pod is refused there (a server-side dry run: admission in full).
    await ns.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    onTestFinished(async () => {
      await ns.core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
    });
    const rendered = await helm("template", RELEASE, CHART, ...values);
    expect(rendered.code, rendered.stderr).toBe(0);
    const speakerPod = () => {
      const daemonSet = (loadAllYaml(rendered.stdout) as (KubernetesObject | null)[]).find(
        (o) => o?.kind === "DaemonSet",
      ) as V1DaemonSet;
      const template = daemonSet.spec!.template;
      // Under the namespace's default ServiceAccount: the release's own is not made yet, and a pod naming a
      // missing one is refused before Pod Security looks at it.
      const spec = { ...template.spec!, serviceAccountName: undefined };
      return { metadata: { name: "speaker-admission", labels: template.metadata?.labels }, spec };
    };
    await waitFor(
      `the ServiceAccount ${NAMESPACE}/default`,
      async () =>
        (await statusOf(ns.core.readNamespacedServiceAccount({ name: "default", namespace: NAMESPACE }))) ===
        0,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const refusal = await ns.core
      .createNamespacedPod({ namespace: NAMESPACE, body: speakerPod(), dryRun: "All" })
      .then(
        () => "admitted",
        (err: unknown) => apiError(err).message,
      );
    expect(refusal).toMatch(
      /^pods "speaker-admission" is forbidden: violates PodSecurity "baseline:latest": /,
    );
    expect(refusal).toContain("host namespaces (hostNetwork=true)");
    expect(refusal).toContain('non-default capabilities (container "speaker" must not include "NET_RAW"');
    // `kubectl label namespace portico-helm pod-security.kubernetes.io/enforce=privileged`: now it is admitted.
    await ns.core.patchNamespace(
      { name: NAMESPACE, body: { metadata: { labels: { [ENFORCE]: "privileged" } } } },
      mergePatch,
    );
    await ns.core.createNamespacedPod({ namespace: NAMESPACE, body: speakerPod(), dryRun: "All" });

    const install = await helm("install", RELEASE, CHART, "--wait", "--timeout", "5m", ...values);
    onTestFinished(async () => {
      await helm("uninstall", RELEASE, "--ignore-not-found");
    });
    expect(install.stderr).not.toMatch(/Error/);
    expect(install.code).toBe(0);
    expect(install.stdout).toMatch(/STATUS: deployed/);

    const manifest = await helm("get", "manifest", RELEASE);
    const objects = (loadAllYaml(manifest.stdout) as (KubernetesObject | null)[]).filter((o) => o !== null);
    // `--wait` returned once Helm judged the workloads ready; the tests' own judgement agrees.
    await waitForRollout(ns.kc, objects, 60_000);
    const speakers = await ns.apps.readNamespacedDaemonSet({
      name: `${RELEASE}-portico-speaker`,
      namespace: NAMESPACE,
    });
    expect(speakers.status?.numberReady).toBe(ns.context.nodes.length);

    await ns.deployEcho("echo", 2);
    await ns.createLoadBalancer(
      "web",
      "echo",
      { loadBalancerClass: CLASS },
      { "portico.io/address-pool": POOL.name },
    );
    const address = await ns.waitForAddress("web", 120_000);
    expect(new Address4(address).isInSubnet(new Address4(POOL.cidr))).toBe(true);
    await ns.waitAvailable("echo");
    const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
    const answer = await waitFor<EchoAnswer>(
      `an answer at http://${address}/ from the LAN's client`,
      () => clientGet(ns.context, `http://${address}/`),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(pods.items.map((p) => p.metadata!.name)).toContain(answer.pod);

    // The Service goes first: the release's controller takes its finalizer off and frees the address.
    await ns.core.deleteNamespacedService({ name: "web", namespace: ns.name });
    await waitFor(
      "the Service to be gone",
      async () =>
        (await statusOf(ns.core.readNamespacedService({ name: "web", namespace: ns.name }))) === 404,
      { timeoutMs: 60_000, intervalMs: 250 },
    );

    const uninstall = await helm("uninstall", RELEASE, "--wait", "--timeout", "3m");
    expect(uninstall.code, uninstall.stderr).toBe(0);
    const api = KubernetesObjectApi.makeApiClient(ns.kc);
    for (const o of objects) {
      const read = api.read(o as KubernetesObject & { metadata: { name: string } });
      expect(await statusOf(read), `${o.kind}/${o.metadata?.name} after uninstall`).toBe(404);
    }
    // Nothing of Portico's is left in the namespace: the pods went with their Deployment and DaemonSet, the
    // memberlist Secret with the release, and Helm's record of the release with it.
    await waitFor(
      `the pods of ${NAMESPACE} to be gone`,
      async () => (await ns.core.listNamespacedPod({ namespace: NAMESPACE })).items.length === 0,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const secrets = await ns.core.listNamespacedSecret({ namespace: NAMESPACE });
    expect(secrets.items.map((s) => s.metadata!.name)).toEqual([]);
    // What the controller made at run time, not Helm, stays until the namespace goes: its leader-election
    // Lease (named after the class), released when the last replica stopped.
    const leases = await ns.kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: NAMESPACE });
    expect(leases.items.map((l) => l.metadata!.name)).toEqual(["portico-controller-portico-io-metal-helm"]);
    expect((await helm("list", "--all")).stdout).not.toContain(RELEASE);
    const crds = ["ipaddresspools.portico.io", "l2advertisements.portico.io"];
    for (const name of crds) {
      const crd = {
        kind: "CustomResourceDefinition",
        apiVersion: "apiextensions.k8s.io/v1",
        metadata: { name },
      };
      expect(await statusOf(api.read(crd))).toBe(0);
    }
  });
});
