import type { ControllerConfig } from "../../../controller/config.ts";
import { SETTINGS_ANNOTATION } from "../../../controller/publishedSettings.ts";
import { waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";

/**
 * Portico's controller as the Deployment runs it for porticoctl: leading on a Lease and publishing its settings
 * there, so porticoctl reads the cluster name and node selector the controller uses. Without them porticoctl
 * would judge targets against every Node of the shared apiserver, other tests' too.
 */
export async function leadingController(
  cluster: TestCluster,
  lease: string,
  overrides: Partial<ControllerConfig> = {},
): Promise<void> {
  await startPortico(cluster, {
    ...overrides,
    leaderElection: {
      enabled: true,
      namespace: cluster.namespace,
      name: lease,
      identity: `${lease}-test`,
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 250,
    },
  });
  await waitFor("the leader to publish its settings", async () => {
    const read = await cluster.coordination.readNamespacedLease({
      name: lease,
      namespace: cluster.namespace,
    });
    return read.metadata?.annotations?.[SETTINGS_ANNOTATION];
  });
}
