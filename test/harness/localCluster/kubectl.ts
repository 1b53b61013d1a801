// The cluster's own kubectl, run as a user would run it against the local cluster (drain, uncordon): for what
// kubectl itself does beyond single API calls, such as evicting a node's pods in turn.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { E2eContext } from "../e2eSetup.ts";
import { ensureTools } from "../tools.ts";

export async function kubectl(context: E2eContext, ...args: string[]): Promise<string> {
  const { kubectl } = await ensureTools("cluster");
  const { stdout } = await promisify(execFile)(kubectl, ["--kubeconfig", context.kubeconfig, ...args], {
    timeout: 300_000,
  });
  return stdout;
}

/** `kubectl drain` as an operator runs it before maintenance: DaemonSets' pods stay, the others are evicted. */
export async function drainNode(context: E2eContext, node: string, timeoutSeconds = 240): Promise<void> {
  await kubectl(
    context,
    "drain",
    node,
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    `--timeout=${timeoutSeconds}s`,
  );
}
