// The Gateway API CRDs Portico serves, from the release test/env/gatewayApi.sh fetched through the Go module proxy
// (cached, so offline after the first run). Installing them is cluster-wide and for the rest of the run.
import { loadAllYaml, type KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { installCrds } from "./manifests.ts";

const SCRIPT = fileURLToPath(new URL("../env/gatewayApi.sh", import.meta.url));

/** The folder holding standard/ and experimental/ CRD manifests. */
export async function gatewayApiCrdFolder(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(SCRIPT, { maxBuffer: 1 << 20 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`test/env/gatewayApi.sh failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

/** The CRDs of one channel (the folder also holds a ValidatingAdmissionPolicy, left out). */
export async function gatewayApiCrds(
  channel: "standard" | "experimental" = "standard",
): Promise<KubernetesObject[]> {
  const dir = join(await gatewayApiCrdFolder(), channel);
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml")).sort();
  const objects = await Promise.all(
    files.map(async (f) => loadAllYaml(await readFile(join(dir, f), "utf8")) as KubernetesObject[]),
  );
  return objects.flat().filter((o) => o?.kind === "CustomResourceDefinition");
}

/** Installs the standard CRDs and waits until each is served. */
export async function installGatewayApi(kc: KubeConfig): Promise<void> {
  await installCrds(kc, await gatewayApiCrds("standard"));
}
