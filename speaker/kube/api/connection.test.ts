import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  connectionFromFile,
  connectionFromKubeconfig,
  defaultConnection,
  KubeconfigError,
} from "./connection.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>) {
  return {
    clusters: [
      { name: "other", cluster: { server: "https://other:6443" } },
      { name: "c", cluster },
    ],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  };
}

describe("the speaker's connection settings", () => {
  test("a kubeconfig's current context: server, CA, client certificate and key, token", () => {
    const c = connectionFromKubeconfig(
      kubeconfig(
        { server: "https://api:6443/", "certificate-authority-data": b64("CA"), "tls-server-name": "kube" },
        { "client-certificate-data": b64("CERT"), "client-key-data": b64("KEY"), token: "t0k" },
      ),
    );
    expect(c.server).toBe("https://api:6443");
    expect(c.tls).toEqual({
      ca: Buffer.from("CA"),
      cert: Buffer.from("CERT"),
      key: Buffer.from("KEY"),
      servername: "kube",
      rejectUnauthorized: true,
    });
    expect(c.token()).toBe("t0k");
  });

  test("files are read relative to the kubeconfig's directory; a token file is read", () => {
    const dir = mkdtempSync(join(tmpdir(), "kubeconfig-"));
    writeFileSync(join(dir, "ca.crt"), "CAFILE");
    writeFileSync(join(dir, "token"), "from-file\n");
    const path = join(dir, "config");
    writeFileSync(
      path,
      [
        "apiVersion: v1",
        "clusters:",
        "- name: c",
        "  cluster: {server: 'https://api:6443', certificate-authority: ca.crt, insecure-skip-tls-verify: true}",
        "users:",
        "- name: u",
        "  user: {tokenFile: token}",
        "contexts:",
        "- name: x",
        "  context: {cluster: c, user: u}",
        "current-context: x",
      ].join("\n"),
    );
    const c = connectionFromFile(path);
    expect(c.tls).toEqual({ ca: Buffer.from("CAFILE"), rejectUnauthorized: false });
    expect(c.token()).toBe("from-file");
    expect(defaultConnection({ KUBECONFIG: `${path}:/elsewhere` }).server).toBe("https://api:6443");
  });

  test("what the speaker does not support is refused by name, never half-applied", () => {
    const refused =
      (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) =>
      () =>
        connectionFromKubeconfig(kubeconfig({ server: "https://api", ...cluster }, user));
    expect(refused({ exec: { command: "aws" } })).toThrow(
      /users\[\]\.user\.exec, which the speaker does not support/,
    );
    expect(refused({ "auth-provider": { name: "gcp" } })).toThrow(/auth-provider/);
    expect(refused({ username: "a", password: "b" })).toThrow(/username/);
    expect(refused({ as: "someone" })).toThrow(/user\.as\b/);
    expect(refused({}, { "proxy-url": "http://proxy" })).toThrow(/proxy-url/);
  });

  test("a context or cluster that is not there, or no server, is a clear error", () => {
    const config = kubeconfig({ server: "https://api" }, {});
    expect(() => connectionFromKubeconfig({ ...config, "current-context": "nope" })).toThrow(
      new KubeconfigError('the kubeconfig has no context named "nope"'),
    );
    expect(() => connectionFromKubeconfig(kubeconfig({}, {}))).toThrow(/has no server/);
    expect(() => connectionFromFile("/nonexistent/kubeconfig")).toThrow(/cannot read the kubeconfig/);
  });
});
