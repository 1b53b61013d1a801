// One connection pool to the apiserver for the whole controller. @kubernetes/client-node makes a new undici Agent
// for every request (KubeConfig.createDispatcher, called by applySecurityAuthentication), so each request and each
// watch restart opened a TLS connection of its own (HTTP/2, since undici 8 offers it), with its own TLS context
// and session buffers, left to linger until the apiserver closed it idle. At 5000 Services that is tens of
// thousands of connections made in a burst: native memory outside V8's heap that the allocator does not give
// back (make bench-memory: it was most of the controller's resident memory). Here every request with the same
// TLS settings goes through one Agent, so requests and watches share connections as client-go's do.
import { createHash, type Hash } from "node:crypto";
import type { AgentOptions } from "node:https";
import type { Cluster, KubeConfig } from "@kubernetes/client-node";

/** What is used of the undici Agent client-node makes. */
interface Dispatcher {
  close(): Promise<void>;
}
type CreateDispatcher = (cluster: Cluster | null, agentOptions: AgentOptions) => Dispatcher | undefined;

/**
 * Makes every API client and watch built from `kc` (before or after this call) share one Agent per set of TLS
 * settings. A client certificate or CA read again from a file that changed gets a new Agent; the old one closes
 * once its requests are done.
 */
export function shareConnections(kc: KubeConfig): KubeConfig {
  // The method is private in the type declarations, and ours shadows it on this instance only.
  const target = kc as unknown as { createDispatcher: CreateDispatcher };
  // A client-node that no longer builds dispatchers this way is found at start-up, not as a slow leak.
  if (typeof target.createDispatcher !== "function")
    throw new Error(
      "@kubernetes/client-node's KubeConfig has no createDispatcher to share connections through",
    );
  const create = target.createDispatcher.bind(kc);
  let shared: { key: string; dispatcher: Dispatcher | undefined } | undefined;
  target.createDispatcher = (cluster, agentOptions) => {
    // The options name the CA, client certificate and key (Buffers, read again for every request).
    const hash = createHash("sha256");
    digest(hash, kc.createDispatcherOptions(cluster, agentOptions));
    const key = hash.digest("hex");
    if (shared?.key === key) return shared.dispatcher;
    const previous = shared?.dispatcher;
    shared = { key, dispatcher: create(cluster, agentOptions) };
    void previous?.close().catch(() => undefined);
    return shared.dispatcher;
  };
  return kc;
}

/**
 * Feeds a value's content to the hash: buffers as their bytes, the rest as JSON, objects key by key. (JSON of the
 * whole options writes each byte of a certificate as a number: at thousands of requests a second, most of what a
 * request cost the controller.)
 */
function digest(hash: Hash, value: unknown): void {
  if (value instanceof Uint8Array) {
    hash.update(`bytes:${value.length}:`).update(value);
  } else if (Array.isArray(value)) {
    hash.update(`[${value.length}:`);
    for (const item of value) digest(hash, item);
    hash.update("]");
  } else if (value !== null && typeof value === "object") {
    hash.update("{");
    for (const [k, v] of Object.entries(value)) digest(hash.update(JSON.stringify(k)), v);
    hash.update("}");
  } else {
    hash.update(`${JSON.stringify(value) ?? "undefined"};`);
  }
}
