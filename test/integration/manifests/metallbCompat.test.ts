// MetalLB's objects as Portico reads them: manifests/metallb-compat (MetalLB's IPAddressPool and L2Advertisement
// CRDs, for clusters whose MetalLB CRDs went with MetalLB) takes MetalLB's manifests unchanged and refuses what
// MetalLB refuses; Portico's own L2Advertisement CRD does the same for its kind; and under the metal overlay's
// ServiceAccounts the controller's and the speaker's caches read MetalLB's objects and the controller writes
// MetalLB pools' status counts, and nothing more.
import { CustomObjectsApi, loadAllYaml, type KubernetesObject } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { ClusterCache } from "../../../controller/runtime/cache.ts";
import { silentLogger } from "../../../shared/log.ts";
import { MetallbPoolStatus } from "../../../providers/metal/metallbPoolStatus.ts";
import { KubeCache } from "../../../speaker/kube/cache.ts";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import {
  apiError,
  installCrds,
  kustomizeBinary,
  MANIFESTS,
  renderOverlay,
  statusOf,
} from "../../harness/manifests.ts";
import { speakerApi } from "../../harness/speakerApi.ts";
import { installRbac } from "./access.ts";

const METALLB_POOLS = { group: "metallb.io", version: "v1beta1", plural: "ipaddresspools" } as const;
const METALLB_ADS = { group: "metallb.io", version: "v1beta1", plural: "l2advertisements" } as const;
const PORTICO_ADS = { group: "portico.io", version: "v1alpha1", plural: "l2advertisements" } as const;

async function renderCompat(): Promise<KubernetesObject[]> {
  const { stdout } = await promisify(execFile)(await kustomizeBinary(), [
    "build",
    join(MANIFESTS, "metallb-compat"),
  ]);
  return loadAllYaml(stdout) as KubernetesObject[];
}

/** Both MetalLB CRDs (the compat copies) and Portico's; MetalLB's objects go in the test's namespace. */
async function installAll(cluster: TestCluster): Promise<CustomObjectsApi> {
  await installCrds(cluster.kubeConfig, [...(await renderCompat()), ...(await renderOverlay("metal"))]);
  return cluster.kubeConfig.makeApiClient(CustomObjectsApi);
}

type Refusal = { ok: false; code: number | undefined; message: string };

async function tryCreate(
  api: CustomObjectsApi,
  cluster: TestCluster,
  obj: { apiVersion: string; kind: string; spec?: unknown },
): Promise<{ ok: true; created: Record<string, unknown> } | Refusal> {
  const [group, version] = obj.apiVersion.split("/") as [string, string];
  const plural = `${obj.kind.toLowerCase()}s`;
  const metadata = { name: `x-${randomBytes(4).toString("hex")}` };
  const body = { ...obj, metadata };
  try {
    const options = { group, version, plural, body, dryRun: "All", fieldValidation: "Strict" };
    const created = (
      group === "metallb.io"
        ? await api.createNamespacedCustomObject({ ...options, namespace: cluster.namespace })
        : await api.createClusterCustomObject(options)
    ) as Record<string, unknown>;
    return { ok: true, created };
  } catch (err) {
    return { ok: false, ...apiError(err) };
  }
}

test("metallb-compat is MetalLB's two kinds, namespaced, and its namespace; MetalLB's manifests apply unchanged", async ({
  cluster,
}) => {
  const objects = await renderCompat();
  expect(objects.map((o) => `${o.kind}/${o.metadata!.name}`).sort()).toEqual([
    "CustomResourceDefinition/ipaddresspools.metallb.io",
    "CustomResourceDefinition/l2advertisements.metallb.io",
    "Namespace/metallb-system",
  ]);
  for (const crd of objects.filter((o) => o.kind === "CustomResourceDefinition")) {
    expect((crd as { spec?: { scope?: string } }).spec?.scope).toBe("Namespaced");
  }
  const api = await installAll(cluster);
  const examples = loadAllYaml(readFileSync(join(MANIFESTS, "examples", "metallb.yaml"), "utf8")) as {
    apiVersion: string;
    kind: string;
    spec?: unknown;
  }[];
  expect(examples.map((e) => e.kind).sort()).toEqual([
    "IPAddressPool",
    "IPAddressPool",
    "L2Advertisement",
    "L2Advertisement",
  ]);
  for (const example of examples) {
    expect(await tryCreate(api, cluster, example), JSON.stringify(example.spec)).toMatchObject({ ok: true });
  }
  const pool = await tryCreate(api, cluster, {
    apiVersion: "metallb.io/v1beta1",
    kind: "IPAddressPool",
    spec: { addresses: ["192.0.2.0/24"] },
  });
  expect(pool).toMatchObject({ ok: true, created: { spec: { autoAssign: true, avoidBuggyIPs: false } } });
});

test("MetalLB's and Portico's L2Advertisement kinds refuse what cannot work, saying what is wrong", async ({
  cluster,
}) => {
  const api = await installAll(cluster);
  const cases: { obj: { apiVersion: string; kind: string; spec: unknown }; message: RegExp }[] = [
    {
      obj: {
        apiVersion: "metallb.io/v1beta1",
        kind: "IPAddressPool",
        spec: { addresses: ["192.0.2.7"] },
      },
      message: /"192\.0\.2\.7" is neither a CIDR/,
    },
    {
      obj: {
        apiVersion: "metallb.io/v1beta1",
        kind: "IPAddressPool",
        spec: { addresses: ["192.0.2.0/24"], nodeSelectors: [{}] },
      },
      message: /unknown field "spec\.nodeSelectors"/,
    },
    {
      obj: {
        apiVersion: "metallb.io/v1beta1",
        kind: "L2Advertisement",
        spec: { nodeSelectors: [{ matchExpressions: [{ key: "edge", operator: "In" }] }] },
      },
      message: /nodeSelectors\[0\]\.matchExpressions\[0\].*values must list at least one value for In/,
    },
    {
      obj: {
        apiVersion: "portico.io/v1alpha1",
        kind: "L2Advertisement",
        spec: { serviceSelectors: [{ matchExpressions: [{ key: "app", operator: "Near" }] }] },
      },
      message: /operator: Unsupported value: "Near"/,
    },
    {
      obj: {
        apiVersion: "portico.io/v1alpha1",
        kind: "L2Advertisement",
        spec: { interfaces: ["a-name-much-too-long"] },
      },
      message: /spec\.interfaces\[0\].*may not be more than 15 bytes/,
    },
    {
      obj: {
        apiVersion: "portico.io/v1alpha1",
        kind: "L2Advertisement",
        spec: { preferredNodeSelectors: [] },
      },
      message: /unknown field "spec\.preferredNodeSelectors"/,
    },
  ];
  for (const { obj, message } of cases) {
    const outcome = await tryCreate(api, cluster, obj);
    expect(outcome, JSON.stringify(obj.spec)).toMatchObject({
      ok: false,
      message: expect.stringMatching(message) as unknown,
    });
  }
  const examples = loadAllYaml(readFileSync(join(MANIFESTS, "examples", "l2advertisement.yaml"), "utf8")) as {
    apiVersion: string;
    kind: string;
    spec: unknown;
  }[];
  expect(examples.length).toBeGreaterThan(0);
  for (const example of examples) {
    expect(await tryCreate(api, cluster, example), JSON.stringify(example.spec)).toMatchObject({ ok: true });
  }
});

test("under the metal ServiceAccounts the caches read MetalLB's objects and the controller keeps its pools' counts", async ({
  cluster,
}) => {
  const admin = await installAll(cluster);
  const ns = cluster.namespace;
  const pool = { apiVersion: "metallb.io/v1beta1", kind: "IPAddressPool" };
  await admin.createNamespacedCustomObject({
    ...METALLB_POOLS,
    namespace: ns,
    body: { ...pool, metadata: { name: "lan" }, spec: { addresses: ["192.0.2.0/30"] } },
  });
  await admin.createNamespacedCustomObject({
    ...METALLB_ADS,
    namespace: ns,
    body: { apiVersion: "metallb.io/v1beta1", kind: "L2Advertisement", metadata: { name: "all" }, spec: {} },
  });
  const portico = `${ns}-front`;
  await admin.createClusterCustomObject({
    ...PORTICO_ADS,
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "L2Advertisement",
      metadata: { name: portico },
      spec: {},
    },
  });
  cluster.defer(() =>
    admin.deleteClusterCustomObject({ ...PORTICO_ADS, name: portico }).then(() => undefined),
  );

  const controllerKc = await installRbac(cluster, "metal", "portico-controller");
  const cache = new ClusterCache(controllerKc, silentLogger(), {
    nodeLabelSelector: cluster.nodeSelector,
    pools: true,
    metallbNamespace: ns,
  });
  cluster.defer(() => cache.stop());
  await cache.start();
  expect(cache.metallbPoolList().map((p) => p.metadata!.name)).toEqual(["lan"]);

  const counts = [{ pool: "lan", assignedIPv4: 1n, assignedIPv6: 0n, availableIPv4: 3n, availableIPv6: 0n }];
  await new MetallbPoolStatus(controllerKc, silentLogger()).write(cache.metallbPoolList(), {
    counts,
    invalid: [],
    findings: [],
  });
  const written = (await admin.getNamespacedCustomObject({
    ...METALLB_POOLS,
    namespace: ns,
    name: "lan",
  })) as {
    status?: unknown;
  };
  expect(written.status).toEqual({ assignedIPv4: 1, assignedIPv6: 0, availableIPv4: 3, availableIPv6: 0 });
  const asController = controllerKc.makeApiClient(CustomObjectsApi);
  const refused = {
    spec: await statusOf(
      asController.patchNamespacedCustomObject(
        { ...METALLB_POOLS, namespace: ns, name: "lan", body: { spec: { autoAssign: false } } },
        mergePatch,
      ),
    ),
    advertisements: await statusOf(
      asController.listNamespacedCustomObject({ ...METALLB_ADS, namespace: ns }),
    ),
  };
  expect(refused).toEqual({ spec: 403, advertisements: 403 });

  const speakerKc = await installRbac(cluster, "metal", "portico-speaker");
  const speaker = new KubeCache(speakerApi(speakerKc), pino({ level: "silent" }), {
    nodeSelector: cluster.nodeSelector,
    namespace: ns,
    metallbNamespace: ns,
  });
  cluster.defer(() => speaker.stop());
  await speaker.start();
  expect(speaker.metallbPoolObjects().map((p) => p.metadata?.name)).toEqual(["lan"]);
  expect(speaker.metallbAdvertisements().map((a) => a.metadata?.name)).toEqual(["all"]);
  await waitFor("the speaker's cache to see Portico's advertisement", () =>
    speaker.advertisements().some((a) => a.metadata?.name === portico),
  );
});
