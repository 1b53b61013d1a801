// Starts the Azure emulator on its own and prints how to reach it; Ctrl-C stops it.
//
//   node test/emulators/azure/main.ts [--port 8443] [--host 127.0.0.1] [--dir DIR] [--operation-duration-ms 2000]
//                                     [--limits frontendIPConfigurationsPerLoadBalancer=10,securityRulesPerGroup=0]
import { parseArgs } from "node:util";
import { startAzureEmulator } from "./index.ts";
import { parseLimits } from "./limits.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    dir: { type: "string" },
    "operation-duration-ms": { type: "string", default: "0" },
    "retry-after-seconds": { type: "string", default: "1" },
    limits: { type: "string" },
  },
});

const azure = await startAzureEmulator({
  port: Number(values.port),
  host: values.host,
  ...(values.dir ? { dir: values.dir } : {}),
  operationDurationMs: Number(values["operation-duration-ms"]),
  retryAfterSeconds: Number(values["retry-after-seconds"]),
  limits: parseLimits(values.limits),
});

const exports = Object.entries({ ...azure.environment, NODE_EXTRA_CA_CERTS: azure.caCertPath })
  .map(([k, v]) => `export ${k}=${v}`)
  .join("\n");
console.log(`Azure emulator (ARM Microsoft.Network + Entra ID token endpoint) listening on ${azure.url}

${exports}

Clients use DefaultAzureCredential({ disableInstanceDiscovery: true }) and
new NetworkManagementClient(credential, AZURE_SUBSCRIPTION_ID, { endpoint: AZURE_RESOURCE_MANAGER_ENDPOINT }).
Create a resource group first: PUT ${azure.url}/subscriptions/${azure.subscriptionId}/resourcegroups/{name}?api-version=2024-11-01
Control API (no token needed): ${azure.url}/_emulator/state, /_emulator/requests, /_emulator/faults, /_emulator/config, /_emulator/reset

Press Ctrl-C to stop.`);

await new Promise<void>((resolve) => {
  process.once("SIGINT", resolve);
  process.once("SIGTERM", resolve);
});
await azure.stop();
