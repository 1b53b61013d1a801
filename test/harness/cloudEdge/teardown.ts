// How a cloud set-up on the local cluster is given back, and what it is given: a test passes vitest's
// onTestFinished, `make demo` and `make test-conformance` a list they run when stopped. Everything a set-up starts
// is handed to `defer` as soon as it exists.
import type { E2eContext } from "../e2eSetup.ts";

export type Defer = (undo: () => void | Promise<void>) => void;

export interface OnEmulatorOptions {
  /** With it, the load balancers carry packets through the emulated edge. */
  dataPlane?: boolean;
  defer: Defer;
}

/**
 * The local cluster as a cloud set-up needs it: its admin kubeconfig, the LAN's client, the nodes and Portico's
 * image. The end-to-end tests' context is one; `describeCluster` makes one of any LocalCluster.
 */
export type CloudCluster = Pick<E2eContext, "kubeconfig" | "client" | "nodes" | "porticoImage">;

export interface OnClusterOptions extends OnEmulatorOptions {
  /**
   * A namespace whose Services of the overlay's class are deleted, while the controller still runs, before
   * Portico is uninstalled (a test's namespace: left behind, they would hold it in Terminating).
   */
  servicesNamespace?: string;
  /** JSON patches of the controller's Deployment beyond the emulator's (e.g. `--default-load-balancer`). */
  controllerPatches?: readonly object[];
}

/** A Defer that collects, and the function that undoes everything collected, last first. */
export function teardownList(): { defer: Defer; undo: () => Promise<void> } {
  const undos: (() => void | Promise<void>)[] = [];
  return {
    defer: (undo) => void undos.push(undo),
    undo: async () => {
      for (const undo of undos.reverse()) await Promise.resolve(undo()).catch(() => undefined);
    },
  };
}
