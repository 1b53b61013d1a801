import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpMethod, KubeConfig, RequestContext } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { shareConnections } from "./connections.ts";

/** A kubeconfig whose cluster's CA is read from a file (as in a pod: the service account's ca.crt). */
function kubeConfig(caFile: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:6443", caFile }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

async function dispatcherOf(kc: KubeConfig) {
  const ctx = new RequestContext("https://127.0.0.1:6443/api/v1/services", HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  return ctx.getDispatcher();
}

describe("connections to the apiserver", () => {
  const caFile = join(mkdtempSync(join(tmpdir(), "portico-connections-")), "ca.crt");

  test("client-node alone makes a new dispatcher, and so new connections, for every request", async () => {
    writeFileSync(caFile, "ca one");
    const kc = kubeConfig(caFile);
    const first = await dispatcherOf(kc);
    expect(first).toBeDefined();
    expect(await dispatcherOf(kc)).not.toBe(first);
  });

  test("shared, every request with the same TLS settings uses one dispatcher", async () => {
    writeFileSync(caFile, "ca one");
    const kc = shareConnections(kubeConfig(caFile));
    const first = await dispatcherOf(kc);
    expect(first).toBeDefined();
    expect(await dispatcherOf(kc)).toBe(first);
    // Clients made from the KubeConfig authenticate through it too, so they share it as well.
    expect(await dispatcherOf(kc)).toBe(first);
  });

  test("a CA file that changed gets a new dispatcher, and the old one is closed", async () => {
    writeFileSync(caFile, "ca one");
    const kc = shareConnections(kubeConfig(caFile));
    const first = (await dispatcherOf(kc)) as unknown as { closed: boolean };
    expect(first.closed).toBe(false);
    writeFileSync(caFile, "ca two");
    const second = await dispatcherOf(kc);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(first.closed).toBe(true);
    expect(await dispatcherOf(kc)).toBe(second);
  });
});
