import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { EnvironmentError } from "./errors.ts";

export interface Tools {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubelet: string;
  kubeProxy: string;
  kubectl: string;
  etcd: string;
  motoServer?: string;
  /** Built with the `all` and `helm` parts. */
  helm?: string;
}

const SETUP = fileURLToPath(new URL("../env/setup.sh", import.meta.url));

/**
 * Builds or finds the local environment's programs (cached by version; instant once built).
 * `parts` chooses which: the AWS emulator is not needed when AWS_ENDPOINT_URL names one.
 */
export async function ensureTools(parts: "all" | "cluster"): Promise<Tools> {
  try {
    const { stdout } = await promisify(execFile)(SETUP, [parts], {
      maxBuffer: 1 << 20,
      // The first build takes minutes; its progress goes to this process's stderr.
      timeout: 30 * 60_000,
    });
    return JSON.parse(stdout) as Tools;
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? "");
    const line = stderr
      .split("\n")
      .reverse()
      .find((l) => l.startsWith("portico: "));
    throw new EnvironmentError(
      line?.slice("portico: ".length) ?? `test/env/setup.sh failed: ${stderr.trim().split("\n").pop()}`,
    );
  }
}
