import type { KubeConfig } from "@kubernetes/client-node";
import { startController, type Controller } from "../../controller/app.ts";
import type { ControllerConfig } from "../../controller/config.ts";
import { silentLogger, createLogger } from "../../shared/log.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";
import { AZURE_CLASS, azureTestConfig } from "./azure.ts";
import type { TestCluster } from "./kube.ts";

export const AWS_CLASS = "portico.io/aws-nlb";

/**
 * Starts Portico's controller in this test process, confined to the test's namespace and Nodes and tagging
 * what it makes with the namespace as cluster name. It is stopped when the test ends; `stop()` earlier
 * simulates a controller going away. Set PORTICO_TEST_LOGS=1 to see its logs. `kubeConfig` runs it under
 * another identity than the admin one (e.g. a ServiceAccount token, to prove its RBAC is enough).
 * `provider: "azure"` serves Azure's class against this worker's Azure emulator (see TestAzure).
 */
/** Each provider's settings in these tests: this worker's Azure emulator; MetalLB's pools not read unless asked. */
function defaultSettings(provider: ControllerConfig["provider"] = "aws"): unknown {
  switch (provider) {
    case "aws":
      return { defaultScheme: "internal", observationTtlMs: 60_000 };
    case "azure":
      return azureTestConfig();
    case "metal":
      return { metallb: { mode: "off", namespace: "metallb-system" } };
  }
}

export async function startPortico(
  cluster: TestCluster,
  overrides: Partial<ControllerConfig> = {},
  opts: { provider?: LoadBalancerProvider; kubeConfig?: KubeConfig } = {},
): Promise<Controller> {
  const config: ControllerConfig = {
    provider: "aws",
    clusterName: cluster.namespace,
    loadBalancerClass: AWS_CLASS,
    defaultForUnclassed: false,
    namespace: cluster.namespace,
    nodeSelector: cluster.nodeSelector,
    workers: 4,
    resyncPeriodMs: 60_000,
    orphanCollectionPeriodMs: 60_000,
    securityRuleCheckPeriodMs: 60_000,
    leaderElection: {
      enabled: false,
      namespace: cluster.namespace,
      name: "portico-controller",
      identity: "test",
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 250,
    },
    metricsAddress: "127.0.0.1:0",
    settings: defaultSettings(overrides.provider),
    ...(overrides.provider === "azure" ? { loadBalancerClass: AZURE_CLASS } : {}),
    ...overrides,
  };
  const log = process.env.PORTICO_TEST_LOGS === "1" ? createLogger({ level: "debug" }) : silentLogger();
  const { kubeConfig = cluster.kubeConfig, ...controllerOpts } = opts;
  const controller = await startController(config, kubeConfig, { log, ...controllerOpts });
  let stopped = false;
  const stop = controller.stop.bind(controller);
  controller.stop = async () => {
    if (stopped) return;
    stopped = true;
    await stop();
  };
  cluster.defer(() => controller.stop());
  return controller;
}
