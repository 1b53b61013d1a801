// How a cloud set-up on the local cluster is given back: a test passes vitest's onTestFinished, `make demo` a
// list it runs when stopped. Everything a set-up starts is handed to `defer` as soon as it exists.

export type Defer = (undo: () => void | Promise<void>) => void;

export interface OnEmulatorOptions {
  /** With it, the load balancers carry packets through the emulated edge. */
  dataPlane?: boolean;
  defer: Defer;
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
