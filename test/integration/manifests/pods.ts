// What the tests need to know about the workloads of a rendered overlay: their pod templates, the one
// container each runs, and its arguments with the files they name made readable outside a cluster.
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Container,
  V1DaemonSet,
  V1Deployment,
  V1PodTemplateSpec,
} from "@kubernetes/client-node";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { find } from "../../harness/manifests.ts";
import { testTempDir } from "../../harness/tempDir.ts";

export interface Workload {
  kind: "Deployment" | "DaemonSet";
  name: string;
  template: V1PodTemplateSpec;
  /** The container running Portico's program (the controller, the speaker). */
  container: V1Container;
  /** The others: the speaker's FRR sidecar and its agent. */
  sidecars: V1Container[];
}

/** The containers beside Portico's own, by workload: only the speaker has any (FRR and the FRR agent). */
const SIDECARS: Record<string, string[]> = { "portico-speaker": ["frr", "frr-agent"] };

export function workloads(objects: KubernetesObject[]): Workload[] {
  return objects
    .filter((o): o is V1Deployment | V1DaemonSet => o.kind === "Deployment" || o.kind === "DaemonSet")
    .map((o) => {
      const name = o.metadata!.name!;
      const template = o.spec!.template;
      const [container, ...sidecars] = template.spec!.containers;
      const expected = SIDECARS[name] ?? [];
      if (!container || sidecars.map((c) => c.name).join() !== expected.join())
        throw new Error(
          `${o.kind} ${name} should run Portico's container first, then ${expected.join(", ") || "nothing else"}`,
        );
      return { kind: o.kind as Workload["kind"], name, template, container, sidecars };
    });
}

export function workload(objects: KubernetesObject[], name: string): Workload {
  const found = workloads(objects).find((w) => w.name === name);
  if (!found) throw new Error(`no workload ${name}`);
  return found;
}

/**
 * The container's arguments with every path under one of its ConfigMap or Secret mounts pointed at a
 * temporary copy: ConfigMap files hold the rendered data, Secret files `secretContent`. So the program's
 * own flag parser can read them as it would in the pod.
 */
export async function argsWithMountedFiles(
  objects: KubernetesObject[],
  w: Workload,
  secretContent = "test-secret",
): Promise<string[]> {
  const dir = testTempDir("portico-mounts-");
  let args = w.container.args ?? [];
  for (const mount of w.container.volumeMounts ?? []) {
    const volume = w.template.spec!.volumes?.find((v) => v.name === mount.name);
    const local = join(dir, mount.name);
    await mkdir(local, { recursive: true });
    if (volume?.configMap) {
      const cm = find<V1ConfigMap>(objects, "ConfigMap", volume.configMap.name!);
      for (const [file, content] of Object.entries(cm.data ?? {}))
        await writeFile(join(local, file), content);
    }
    for (const arg of args) {
      const path = arg.split("=", 2)[1];
      if (volume?.secret && path?.startsWith(`${mount.mountPath}/`))
        await writeFile(join(local, path.slice(mount.mountPath.length + 1)), secretContent);
    }
    args = args.map((a) => a.replace(`=${mount.mountPath}/`, `=${local}/`));
  }
  return args;
}

/** The environment the container gets from the downward API, with these values. */
export function downwardEnv(
  c: V1Container,
  values: { namespace: string; nodeName: string; podName: string },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (field === "metadata.namespace") env[e.name] = values.namespace;
    else if (field === "spec.nodeName") env[e.name] = values.nodeName;
    else if (field === "metadata.name") env[e.name] = values.podName;
  }
  return env;
}
