import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { describeCluster, startClusterWithPortico } from "./localCluster/install.ts";
import { hostChanges, hostState, type HostState } from "./localCluster/hostState.ts";
import { servePowerControl } from "./localCluster/nodeControl.ts";
import type { NodeDescription } from "./localCluster/workerNode.ts";
import type { LanHost } from "./netns.ts";

/** What the end-to-end tests get: the cluster as a user and the LAN's client see it, and its nodes. */
export interface E2eContext {
  kubeconfig: string;
  client: LanHost;
  nodes: NodeDescription[];
  workloadImage: string;
  /** Portico's image, built from the Dockerfile. */
  porticoImage: string;
  /** The addresses of the IPAddressPool `e2e`, on the LAN. */
  pool: string;
  /** Where to ask for a node's power to be cut or restored (nodeControl.ts). */
  powerSocket?: string;
  /** The machine's own state before the cluster started (hostState.ts). */
  hostBefore?: HostState;
}

declare module "vitest" {
  export interface ProvidedContext {
    e2e: E2eContext;
  }
}

export const E2E_POOL = "192.0.2.240/28";

/**
 * Starts the local cluster once per run (control plane, three worker nodes, the LAN and its client), loads
 * the images built from the repository into every node and installs Portico's metal overlay on it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const hostBefore = await hostState();
  const dir = await mkdtemp(join(tmpdir(), "portico-e2e-"));
  const { cluster, images } = await startClusterWithPortico({
    dir: join(dir, "cluster"),
    pool: { name: "e2e", addresses: [E2E_POOL] },
  });
  const powerSocket = join(dir, "power.sock");
  const power = await servePowerControl(powerSocket, cluster.nodes);
  project.provide("e2e", {
    ...describeCluster(cluster, images, E2E_POOL),
    powerSocket,
    hostBefore,
  });
  return async () => {
    power.close();
    await cluster.stop();
    // PORTICO_KEEP_RUN=1 keeps the nodes' directories (the pods' logs among them) for a look afterwards.
    if (process.env.PORTICO_KEEP_RUN !== "1") await rm(dir, { recursive: true, force: true });
    const changes = hostChanges(hostBefore, await hostState());
    if (changes.length) throw new Error(`the local cluster changed the machine: ${changes.join("; ")}`);
  };
}
