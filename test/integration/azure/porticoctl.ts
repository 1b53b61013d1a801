// porticoctl status run as a person runs it: its own process, reading the controller's azure.json and trusting
// the emulator's CA the way any Node process is told to (NODE_EXTRA_CA_CERTS).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { inject } from "vitest";
import type { TestAzure } from "../../harness/index.ts";

const PORTICOCTL = join(import.meta.dirname, "..", "..", "..", "controller", "cli", "porticoctl.ts");

/** What `porticoctl status <service> -o wide --azure-config <file>` prints, stdout and stderr together. */
export function porticoctlStatus(azure: TestAzure, service: string, configFile: string): Promise<string> {
  const caCertPath = inject("azureEndpoints").find((e) => e.url === azure.url)!.caCertPath;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: caCertPath, NO_COLOR: "1" };
  delete env.PORTICO_AZURE_CONFIG;
  const args = [PORTICOCTL, "status", service, "-o", "wide", "--azure-config", configFile];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...args, "--kubeconfig", inject("kubeconfig")],
      { env, timeout: 60_000 },
      (_err, stdout, stderr) => resolve(stdout + stderr),
    );
  });
}
