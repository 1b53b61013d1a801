import type { TestProject } from "vitest/node";
import type { AwsEndpoint } from "./awsEmulator.ts";
import type { AzureEndpoint } from "./azure.ts";
import { startEnvironment } from "./environment.ts";
import { TEST_WORKERS } from "./workers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    awsEndpoints: AwsEndpoint[];
    azureEndpoints: AzureEndpoint[];
  }
}

/** Starts the control plane and the AWS and Azure emulators once per test run; the returned function stops them. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = await startEnvironment({ awsEndpoints: TEST_WORKERS, azureEmulators: TEST_WORKERS });
  project.provide("kubeconfig", env.controlPlane.kubeconfig);
  project.provide("awsEndpoints", env.awsEndpoints);
  project.provide("azureEndpoints", env.azureEndpoints);
  return () => env.stop({ keepFiles: process.env.PORTICO_KEEP_RUN === "1" });
}
