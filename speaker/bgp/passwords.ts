// BGPPeers' passwords kept in Secrets (passwordSecret, in the speaker's namespace, key "password", as MetalLB's
// basic-auth Secrets hold it). Read when first needed and again each minute, so a rotated password reaches FRR
// without a watch on every Secret of the namespace; a Secret that cannot be read is said and the peer's
// session is configured without it (and so does not come up) rather than left as it was.
import type { V1Secret } from "@kubernetes/client-node";
import { resourcePath, type KubeApi } from "../kube/api/client.ts";

const REFRESH_MS = 60_000;

export class PasswordSecrets {
  private readonly api: KubeApi;
  private readonly namespace: string;
  private readonly changed: () => void;
  private readonly known = new Map<string, { password?: string; problem?: string; at: number }>();
  private readonly pending = new Set<string>();

  constructor(api: KubeApi, namespace: string, changed: () => void) {
    this.api = api;
    this.namespace = namespace;
    this.changed = changed;
  }

  /** The password now known for the Secret (fetching it in the background when unknown or stale). */
  get(name: string): { password?: string; problem?: string } {
    const entry = this.known.get(name);
    if ((!entry || Date.now() - entry.at > REFRESH_MS) && !this.pending.has(name)) void this.fetch(name);
    return entry ?? { problem: `Secret ${this.namespace}/${name} not read yet` };
  }

  private async fetch(name: string): Promise<void> {
    this.pending.add(name);
    let next: { password?: string; problem?: string };
    try {
      const path = resourcePath({
        group: "",
        version: "v1",
        plural: "secrets",
        namespace: this.namespace,
        name,
      });
      const secret = await this.api.get<V1Secret>(path);
      const encoded = secret.data?.password;
      next = encoded
        ? { password: Buffer.from(encoded, "base64").toString("utf8") }
        : { problem: `Secret ${this.namespace}/${name} has no "password" key` };
    } catch (err) {
      next = { problem: `Secret ${this.namespace}/${name} cannot be read: ${(err as Error).message}` };
    } finally {
      this.pending.delete(name);
    }
    const before = this.known.get(name);
    this.known.set(name, { ...next, at: Date.now() });
    if (before?.password !== next.password || before?.problem !== next.problem) this.changed();
  }
}
