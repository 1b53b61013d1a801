// The deployment manifests as the tests use them: each overlay rendered by the real kustomize (the program
// `kubectl apply -k` embeds, built and cached by test/env/kustomize.sh), moved into a test's namespace, and
// applied to the test apiserver, for real or as a server-side dry run; and clients that act as one of the
// manifests' ServiceAccounts.
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  type KubernetesObject,
  type V1ClusterRoleBinding,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "./wait.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");

export const MANIFESTS = join(root, "manifests");
export const OVERLAYS = ["eks", "aks", "metal"] as const;
export type Overlay = (typeof OVERLAYS)[number];
/** The namespace every manifest installs into. */
export const INSTALL_NAMESPACE = "portico-system";
const FIELD_MANAGER = "portico-manifest-tests";

let kustomize: Promise<string> | undefined;

/** The kustomize binary, built on first use (about half a minute; then cached under .cache/). */
export function kustomizeBinary(): Promise<string> {
  kustomize ??= run(join(root, "test", "env", "kustomize.sh"), { cwd: root, maxBuffer: 1 << 20 }).then(
    ({ stdout }) => stdout.trim(),
    (err: { stderr?: string; message: string }) => {
      throw new Error(`test/env/kustomize.sh failed: ${err.stderr?.trim() || err.message}`);
    },
  );
  return kustomize;
}

/** `kustomize build manifests/overlays/<overlay>`: every object `kubectl apply -k` would send. */
export async function renderOverlay(overlay: Overlay): Promise<KubernetesObject[]> {
  const { stdout } = await run(await kustomizeBinary(), ["build", join(MANIFESTS, "overlays", overlay)], {
    maxBuffer: 16 << 20,
  });
  return loadAllYaml(stdout) as KubernetesObject[];
}

/**
 * What a user's own kustomization renders when it includes the overlay and sets only the image (one
 * `images:` entry named `portico`), as manifests/README.md says to deploy it.
 */
export async function renderOverlayWithImage(
  overlay: Overlay,
  image: string,
  /** More of the user's kustomization: a namespace, a name prefix, patches. */
  extra: Record<string, unknown> = {},
): Promise<KubernetesObject[]> {
  const dir = await mkdtemp(join(tmpdir(), "portico-kustomization-"));
  try {
    const at = image.lastIndexOf(":");
    const [newName, newTag] =
      at > image.lastIndexOf("/") ? [image.slice(0, at), image.slice(at + 1)] : [image, undefined];
    const kustomization = {
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: [relative(dir, join(MANIFESTS, "overlays", overlay))],
      images: [{ name: "portico", newName, ...(newTag ? { newTag } : {}) }],
      ...extra,
    };
    await writeFile(join(dir, "kustomization.yaml"), JSON.stringify(kustomization));
    const { stdout } = await run(await kustomizeBinary(), ["build", dir], { maxBuffer: 16 << 20 });
    return loadAllYaml(stdout) as KubernetesObject[];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function find<T extends KubernetesObject = KubernetesObject>(
  objects: KubernetesObject[],
  kind: string,
  name: string,
): T {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found)
    throw new Error(
      `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(", ")}`,
    );
  return found as T;
}

/**
 * The objects as if installed into `namespace` instead of portico-system (what kustomize's `namespace:`
 * does), with `suffix` appended to the names of cluster-scoped RBAC objects so that parallel tests can each
 * create their own. The Namespace object becomes `namespace` itself, keeping its labels.
 */
export function relocate(objects: KubernetesObject[], namespace: string, suffix: string): KubernetesObject[] {
  const copy = structuredClone(objects);
  const clusterRoles = new Set(copy.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata!.name!));
  for (const obj of copy) {
    const meta = obj.metadata!;
    if (obj.kind === "Namespace") meta.name = namespace;
    else if (meta.namespace === INSTALL_NAMESPACE) meta.namespace = namespace;
    if (obj.kind === "ClusterRole" || obj.kind === "ClusterRoleBinding") meta.name = `${meta.name}-${suffix}`;
    if (obj.kind === "ClusterRoleBinding" || obj.kind === "RoleBinding") {
      const binding = obj as V1ClusterRoleBinding | V1RoleBinding;
      if (binding.roleRef.kind === "ClusterRole" && clusterRoles.has(binding.roleRef.name))
        binding.roleRef.name = `${binding.roleRef.name}-${suffix}`;
      for (const subject of binding.subjects ?? [])
        if (subject.namespace === INSTALL_NAMESPACE) subject.namespace = namespace;
    }
  }
  return copy;
}

export interface ApplyFailure {
  object: string;
  code: number | undefined;
  message: string;
}

/**
 * Server-side apply of each object, as `kubectl apply --server-side` sends it; with `dryRun` the apiserver
 * runs admission and validation in full and stores nothing. Returns the objects it refused, with why.
 */
export async function apply(
  kc: KubeConfig,
  objects: KubernetesObject[],
  opts: { dryRun: boolean },
): Promise<ApplyFailure[]> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const failures: ApplyFailure[] = [];
  for (const obj of objects) {
    try {
      await api.patch(
        obj,
        undefined,
        opts.dryRun ? "All" : undefined,
        FIELD_MANAGER,
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (err) {
      failures.push({ object: `${obj.kind}/${obj.metadata?.name}`, ...apiError(err) });
    }
  }
  return failures;
}

/** Applies the CustomResourceDefinitions among `objects` for real and waits until they are served. */
export async function installCrds(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
  const failures = await apply(kc, crds, { dryRun: false });
  if (failures.length) throw new Error(`installing CRDs failed: ${JSON.stringify(failures)}`);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds) {
    await waitFor(`CRD ${crd.metadata!.name} to be established`, async () => {
      const got = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }
}

/** The HTTP status and the apiserver's own message of a failed API call. */
export function apiError(err: unknown): { code: number | undefined; message: string } {
  const e = err as { code?: number; body?: unknown; message?: string };
  let message = e.message ?? String(err);
  try {
    const body = (typeof e.body === "string" ? JSON.parse(e.body) : e.body) as { message?: string };
    if (body?.message) message = body.message;
  } catch {
    // not a Status object: keep the error's own text
  }
  return { code: e.code, message };
}

/** The status code of `call`'s failure, or 0 when it succeeded. */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 0;
  } catch (err) {
    return apiError(err).code ?? -1;
  }
}

/**
 * A KubeConfig that authenticates as `namespace/serviceAccount` with a token the apiserver signed
 * (TokenRequest), as a pod running under that ServiceAccount would.
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  namespace: string,
  serviceAccount: string,
): Promise<KubeConfig> {
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: ["https://kubernetes.default.svc"], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token: token.status!.token }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  return kc;
}

// The Helm chart (manifests/charts/portico), rendered and installed by the real helm, built from the Go module
// proxy by test/env/setup.sh (test/helm) and cached under .cache/.
export const CHART = join(MANIFESTS, "charts", "portico");

let helm: Promise<string> | undefined;

/** The helm binary, built on first use (a few minutes cold; then cached under .cache/). */
export function helmBinary(): Promise<string> {
  helm ??= run(join(root, "test", "env", "setup.sh"), ["helm"], {
    cwd: root,
    maxBuffer: 1 << 20,
    timeout: 30 * 60_000,
  }).then(
    ({ stdout }) => (JSON.parse(stdout) as { helm: string }).helm,
    (err: { stderr?: string; message: string }) => {
      throw new Error(`test/env/setup.sh helm failed: ${err.stderr?.trim() || err.message}`);
    },
  );
  return helm;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs helm with `args`, its configuration, cache and data in a directory of the tests' own (never the
 * user's), and returns how it exited instead of throwing: the tests look at helm's refusals too.
 */
export async function runHelm(args: string[], opts: { kubeconfig?: string } = {}): Promise<HelmResult> {
  const home = join(tmpdir(), "portico-helm-home");
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_DATA_HOME: join(home, "data"),
    ...(opts.kubeconfig ? { KUBECONFIG: opts.kubeconfig } : {}),
  };
  try {
    const { stdout, stderr } = await run(await helmBinary(), args, { env, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
  }
}

/**
 * The chart's values that correspond to each overlay, as a user passes them on helm's command line: the
 * provider, the overlay's placeholder cluster name, its namespace, and the cloud identity and settings its
 * patches carry.
 */
export function chartArgs(overlay: Overlay): string[] {
  // The overlays make their namespace; a release installs into the namespace Helm makes unless told to.
  const common = ["--set", "clusterName=my-cluster", "--set", "namespace.create=true"];
  switch (overlay) {
    case "eks":
      return [
        ...["--set", "provider=aws", ...common, "--set", "aws.region=us-east-1"],
        ...["--set", "aws.roleArn=arn:aws:iam::111122223333:role/portico-controller"],
      ];
    case "aks":
      return [
        ...["--set", "provider=azure", ...common],
        ...["--set", "azure.workloadIdentity.clientId=00000000-0000-0000-0000-000000000000"],
        ...["--set-file", `azure.cloudConfig=${join(MANIFESTS, "overlays", "aks", "azure.json")}`],
      ];
    case "metal":
      return ["--set", "provider=metal", ...common];
  }
}

/**
 * `helm template <release> manifests/charts/portico -n <namespace> <args>`: every object `helm install` would
 * send (with `includeCrds`, the CRDs of crds/ too). Throws with helm's message when it refuses the values.
 */
export async function renderChart(
  args: string[],
  opts: { release?: string; namespace?: string; includeCrds?: boolean } = {},
): Promise<KubernetesObject[]> {
  const result = await runHelm([
    "template",
    opts.release ?? "portico",
    CHART,
    "--namespace",
    opts.namespace ?? INSTALL_NAMESPACE,
    ...(opts.includeCrds ? ["--include-crds"] : []),
    ...args,
  ]);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr.trim()}`);
  return (loadAllYaml(result.stdout) as (KubernetesObject | null)[]).filter((o) => o !== null);
}
