// Installs Portico into the local cluster the way docs/installation.md tells users to: for bare metal a plain
// namespace and the memberlist Secret in it first (the overlay's Namespace brings the Pod Security label the
// speakers need, which the cluster's default level would refuse: podSecurity.ts), then a kustomization of the
// user's own that includes the overlay and sets only the images (Portico's, and for the metal overlay FRR's,
// pointed at a mirror: here the stand-in test/env/images.sh builds), then an IPAddressPool; and waits until the
// controller Deployment and the speaker DaemonSet are ready, scheduled by the real scheduler and run by the real
// kubelets from the image built from the Dockerfile.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import type { E2eContext } from "../e2eSetup.ts";
import { EnvironmentError } from "../errors.ts";
import { apply, installCrds, renderOverlayWithImage, type Overlay } from "../manifests.ts";
import { ensureTools } from "../tools.ts";
import { waitFor } from "../wait.ts";
import { LocalCluster } from "./cluster.ts";
import { buildImages, type ClusterImages } from "./images.ts";

export const INSTALL_NAMESPACE = "portico-system";

export interface PoolSpec {
  name: string;
  addresses: string[];
}

export async function installPortico(
  kubeconfig: string,
  opts: {
    overlay: Overlay;
    image: string;
    /** Where the speaker's FRR containers take FRR's image from (the metal overlay names upstream's). */
    frrImage?: string;
    pools?: PoolSpec[];
    timeoutMs?: number;
    /** More of the user's own kustomization (a namespace, a name prefix, patches). */
    kustomization?: Record<string, unknown>;
  },
): Promise<KubernetesObject[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const objects = await renderOverlayWithImage(opts.overlay, opts.image, {
    ...opts.kustomization,
    ...(opts.frrImage
      ? { images: [imageEntry("portico", opts.image), imageEntry(UPSTREAM_FRR, opts.frrImage)] }
      : {}),
  });
  if (opts.overlay === "metal") {
    // The commands docs/installation.md gives before applying: a plain namespace (`kubectl create namespace`),
    // whose Pod Security labels come with the overlay's Namespace below (the speakers are refused until then),
    // and the speakers' shared secret in it.
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: INSTALL_NAMESPACE } } });
    await core.createNamespacedSecret({
      namespace: INSTALL_NAMESPACE,
      body: {
        metadata: { name: "portico-memberlist" },
        stringData: { secret: randomBytes(32).toString("base64") },
      },
    });
    await installCrds(kc, objects);
  }
  // In kustomize's order, as `kubectl apply -k` sends them: the Namespace first.
  const rest = objects.filter((o) => o.kind !== "CustomResourceDefinition");
  const failures = await apply(kc, rest, { dryRun: false });
  if (failures.length)
    throw new Error(`installing the ${opts.overlay} overlay failed: ${JSON.stringify(failures)}`);
  for (const pool of opts.pools ?? []) await createPool(kc, pool);
  await waitForRollout(kc, objects, opts.timeoutMs ?? 180_000);
  return objects;
}

/** The image the metal overlay's FRR containers name, which a user's `images:` entry points at a mirror. */
const UPSTREAM_FRR = "quay.io/frrouting/frr";

/** A kustomization `images:` entry giving `name` the reference `image` (a tag after the last colon, if any). */
function imageEntry(name: string, image: string): { name: string; newName: string; newTag?: string } {
  const at = image.lastIndexOf(":");
  return at > image.lastIndexOf("/")
    ? { name, newName: image.slice(0, at), newTag: image.slice(at + 1) }
    : { name, newName: image };
}

/** Deletes what installPortico applied, last first (`kubectl delete -k`). */
export async function uninstall(kubeconfig: string, objects: KubernetesObject[]): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of [...objects].reverse())
    await api.delete(obj).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    });
  // Gone, not just going: a namespace terminates for as long as its pods take to stop, and the next install of
  // the same overlay could not create anything in it meanwhile.
  const deadline = Date.now() + 180_000;
  for (const obj of objects) {
    for (;;) {
      const gone = await api.read(obj as KubernetesObject & { metadata: { name: string } }).then(
        () => false,
        (err: { code?: number }) => err.code === 404,
      );
      if (gone) break;
      if (Date.now() > deadline)
        throw new Error(`${obj.kind}/${obj.metadata?.name} was still there 180 s after it was deleted`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function createPool(kc: KubeConfig, pool: PoolSpec): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: "portico.io",
    version: "v1alpha1",
    plural: "ipaddresspools",
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "IPAddressPool",
      metadata: { name: pool.name },
      spec: { addresses: pool.addresses },
    },
  });
}

/** Every Deployment available with all its replicas, every DaemonSet ready on every node it wants. */
export async function waitForRollout(
  kc: KubeConfig,
  objects: KubernetesObject[],
  timeoutMs: number,
): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  for (const obj of objects) {
    const { name, namespace } = obj.metadata as { name: string; namespace: string };
    if (obj.kind === "Deployment") {
      await waitFor(
        `Deployment ${namespace}/${name} to have all replicas available`,
        async () => {
          const d = await apps.readNamespacedDeployment({ name, namespace });
          const want = d.spec?.replicas ?? 1;
          if ((d.status?.availableReplicas ?? 0) === want && (d.status?.updatedReplicas ?? 0) === want)
            return true;
          throw new Error(`status ${JSON.stringify(d.status)}`);
        },
        { timeoutMs, intervalMs: 500 },
      );
    } else if (obj.kind === "DaemonSet") {
      await waitFor(
        `DaemonSet ${namespace}/${name} to be ready on every node`,
        async () => {
          const ds = await apps.readNamespacedDaemonSet({ name, namespace });
          const s = ds.status;
          if (s && s.desiredNumberScheduled > 0 && s.numberReady === s.desiredNumberScheduled) return true;
          throw new Error(`status ${JSON.stringify(s)}`);
        },
        { timeoutMs, intervalMs: 500 },
      );
    }
  }
}

/**
 * The local cluster with Portico installed from the metal overlay and one IPAddressPool: what the
 * end-to-end suite and the demo run. Builds (or takes from the cache) the programs and the images first.
 */
export async function startClusterWithPortico(opts: { dir: string; pool: PoolSpec }): Promise<{
  cluster: LocalCluster;
  images: ClusterImages;
  seconds: { images: number; cluster: number; install: number };
}> {
  if (process.getuid?.() !== 0)
    throw new EnvironmentError("the local cluster needs root (network namespaces, containerd, kubelet)");
  const t0 = Date.now();
  const [tools, images] = await Promise.all([ensureTools("cluster"), buildImages()]);
  const t1 = Date.now();
  const cluster = await LocalCluster.start({
    dir: opts.dir,
    tools,
    images: [images.pause, images.portico, images.workload, images.frr],
  });
  const t2 = Date.now();
  try {
    await installPortico(cluster.kubeconfig, {
      overlay: "metal",
      image: images.portico.ref,
      frrImage: images.frr.ref,
      pools: [opts.pool],
    });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  const seconds = { images: (t1 - t0) / 1000, cluster: (t2 - t1) / 1000, install: (Date.now() - t2) / 1000 };
  return { cluster, images, seconds };
}

/** The cluster as the end-to-end tests, the demo and the benchmark use it: plain data any process can hold. */
export function describeCluster(cluster: LocalCluster, images: ClusterImages, pool: string): E2eContext {
  return {
    kubeconfig: cluster.kubeconfig,
    client: cluster.client,
    nodes: cluster.nodes.map((n) => n.describe()),
    workloadImage: images.workload.ref,
    porticoImage: images.portico.ref,
    pool,
  };
}
