// porticoctl reads ARM with the controller's own Azure configuration — the same cloud-config file (azure.json)
// and the same environment overrides — so it looks for the Service's load balancer where the controller made it.
import { readFileSync } from "node:fs";
import { parseAzureConfig, type AzureConfig } from "../../providers/azure/config.ts";

/** Throws an Error naming the file and what is wrong with it. */
export function loadAzureConfig(file: string, env: NodeJS.ProcessEnv): AzureConfig {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`--azure-config ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseAzureConfig(json, env);
  } catch (err) {
    throw new Error(`--azure-config ${file}: ${(err as Error).message}`, { cause: err });
  }
}
