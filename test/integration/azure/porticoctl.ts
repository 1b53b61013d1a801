// porticoctl run as a person runs it: its own process, reading the controller's azure.json and trusting the
// emulator's CA the way any Node process is told to (NODE_EXTRA_CA_CERTS).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { inject } from "vitest";
import type { TestAzure } from "../../harness/index.ts";

const PORTICOCTL = join(import.meta.dirname, "..", "..", "..", "controller", "cli", "porticoctl.ts");

/** What `porticoctl <args> --kubeconfig …` prints, stdout and stderr together, and its exit code. */
export function porticoctl(azure: TestAzure, ...args: string[]): Promise<{ code: number; out: string }> {
  const caCertPath = inject("azureEndpoints").find((e) => e.url === azure.url)!.caCertPath;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: caCertPath, NO_COLOR: "1" };
  delete env.PORTICO_AZURE_CONFIG;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PORTICOCTL, ...args, "--kubeconfig", inject("kubeconfig")],
      { env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: !err ? 0 : typeof err.code === "number" ? err.code : 1, out: stdout + stderr }),
    );
  });
}

/** What `porticoctl status <service> -o wide --azure-config <file>` prints, stdout and stderr together. */
export async function porticoctlStatus(
  azure: TestAzure,
  service: string,
  configFile: string,
): Promise<string> {
  return (await porticoctl(azure, "status", service, "-o", "wide", "--azure-config", configFile)).out;
}
