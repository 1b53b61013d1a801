// The images the local cluster runs, built by test/env/images.sh from the repository (Portico's own from its
// unmodified Dockerfile) and cached by a hash of their inputs: the first build takes minutes, later ones
// nothing.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { EnvironmentError } from "../errors.ts";
import type { ImageArchive } from "./workerNode.ts";

export interface ClusterImages {
  portico: ImageArchive;
  workload: ImageArchive;
  pause: ImageArchive;
  /** The stand-in for upstream's FRR image (Debian's frr 8.4), for the speaker's FRR containers. */
  frr: ImageArchive;
  /** Seconds each part took to build in this run (0 when it came from the cache). */
  seconds: Record<string, number>;
}

const SCRIPT = fileURLToPath(new URL("../../env/images.sh", import.meta.url));

/** Builds what is missing; the build's progress goes to this process's stderr as it happens. */
export function buildImages(): Promise<ClusterImages> {
  return runBuildScript<ClusterImages>(SCRIPT);
}

/**
 * Runs a build script of test/env/ that prints one JSON object on stdout, its progress going to this process's
 * stderr; a failure rejects with the script's last `portico: ` line, which says what failed and how to fix it.
 */
export function runBuildScript<T>(script: string): Promise<T> {
  const name = script.slice(script.lastIndexOf("/test/") + 1);
  return new Promise((resolve, reject) => {
    const child = spawn(script, [], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8192);
      process.stderr.write(chunk);
    });
    child.once("error", (err) => reject(new EnvironmentError(`${name}: ${err.message}`)));
    child.once("close", (code) => {
      if (code === 0) return resolve(JSON.parse(stdout) as T);
      const line = stderr
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("portico: "));
      reject(new EnvironmentError(line?.slice("portico: ".length) ?? `${name} exited with ${code}`));
    });
  });
}
