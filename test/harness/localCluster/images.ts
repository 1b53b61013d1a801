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
  return new Promise((resolve, reject) => {
    const child = spawn(SCRIPT, [], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8192);
      process.stderr.write(chunk);
    });
    child.once("error", (err) => reject(new EnvironmentError(`test/env/images.sh: ${err.message}`)));
    child.once("close", (code) => {
      if (code === 0) return resolve(JSON.parse(stdout) as ClusterImages);
      const line = stderr
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("portico: "));
      reject(
        new EnvironmentError(line?.slice("portico: ".length) ?? `test/env/images.sh exited with ${code}`),
      );
    });
  });
}
