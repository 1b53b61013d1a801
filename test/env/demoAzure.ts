// The demo's Azure part: the ARM emulator seeded with a resource group, VNet and security group, two Nodes in
// its subnet, and Portico's Azure controller serving class portico.io/azure-lb.
import type { KubeConfig } from "@kubernetes/client-node";
import { writeFile } from "node:fs/promises";
import { startController, type Controller } from "../../controller/app.ts";
import type { ControllerConfig } from "../../controller/config.ts";
import type { Logger } from "../../shared/log.ts";
import { trustCertificateAuthority } from "../emulators/azure/index.ts";
import { azureTestConfig, TestAzure, type AzureEndpoint } from "../harness/azure.ts";
import type { TestCluster } from "../harness/kube.ts";

/**
 * Starts the Azure part; `configFile` receives the controller's azure.json, so porticoctl can read the same
 * subscription (`--azure-config`).
 */
export async function startAzureDemo(
  cluster: TestCluster,
  endpoint: AzureEndpoint,
  base: ControllerConfig,
  kc: KubeConfig,
  log: Logger,
  configFile: string,
): Promise<Controller> {
  trustCertificateAuthority(endpoint.caCertPath);
  Object.assign(process.env, endpoint.environment);
  const azure = await TestAzure.fresh();
  await writeFile(configFile, JSON.stringify(azure.config(), null, 2));
  for (const [i, ip] of ["10.0.1.10", "10.0.1.11"].entries()) {
    await cluster.createNode(`azure-${i}`, { internalIP: ip, labels: { "demo.portico.io/cloud": "azure" } });
  }
  return startController(
    {
      ...base,
      provider: "azure",
      loadBalancerClass: "portico.io/azure-lb",
      nodeSelector: `${cluster.nodeSelector},demo.portico.io/cloud=azure`,
      leaderElection: { ...base.leaderElection, enabled: false },
      settings: azureTestConfig({ pollIntervalMs: 50 }),
    },
    kc,
    { log },
  );
}
