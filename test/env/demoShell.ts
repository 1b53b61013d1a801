// What the demo gives a user's own shell: porticoctl as `make build` makes it (one executable, build/porticoctl.ts)
// beside the cluster's kubectl in a folder of the demo's, and the variables that point both at the demo's cluster
// and emulators. The demo runs its own porticoctl commands the same way, so what it shows is what those lines do.
import { spawn } from "node:child_process";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { buildPorticoctl } from "../../build/porticoctl.ts";

export interface DemoShell {
  /** kubectl (the cluster's own release), kubectl-portico and porticoctl. */
  bin: string;
  /** The variables a user's shell exports, as `export` lines. */
  exports: string[];
  /** Runs a command with the user's PATH and variables, its output going to the demo's. */
  run(command: string, ...args: string[]): Promise<number>;
}

/** `variables` in groups, an `export` line each (the kubeconfig, the AWS emulator's, the Azure emulator's). */
export async function demoShell(
  dir: string,
  kubectl: string,
  variables: Record<string, string>[],
): Promise<DemoShell> {
  const bin = join(dir, "bin");
  await buildPorticoctl(bin, join(dir, "porticoctl-build"));
  await symlink(kubectl, join(bin, "kubectl"));
  const exports = [
    `export PATH=${bin}:$PATH`,
    ...variables.map(
      (group) =>
        `export ${Object.entries(group)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`,
    ),
  ];
  const env = {
    ...process.env,
    ...Object.fromEntries(variables.flatMap((group) => Object.entries(group))),
    PATH: `${bin}:${process.env.PATH}`,
  };
  const run = (command: string, ...args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn(join(bin, command), args, { env, stdio: ["ignore", "inherit", "inherit"] });
      child.once("error", reject);
      child.once("close", (code) => resolve(code ?? 1));
    });
  return { bin, exports, run };
}
