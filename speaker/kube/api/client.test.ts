// The client's HTTP behaviour against a local server standing in for the apiserver's answers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { KubeApi, KubeApiError, resourcePath } from "./client.ts";

let server: http.Server | undefined;

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function serve(
  handler: http.RequestListener,
): Promise<{ api: KubeApi; requests: http.IncomingMessage[] }> {
  const requests: http.IncomingMessage[] = [];
  server = http.createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const api = KubeApi.fromKubeconfig({
    clusters: [{ name: "c", cluster: { server: `http://127.0.0.1:${port}` } }],
    users: [{ name: "u", user: { token: "s3cret" } }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
  return { api, requests };
}

function body(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => resolve(text));
  });
}

describe("the speaker's Kubernetes client", () => {
  test("sends the token, JSON bodies with their content types, and parses the answer", async () => {
    const bodies: string[] = [];
    const { api, requests } = await serve((req, res) => {
      void body(req).then((text) => {
        bodies.push(text);
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ method: req.method }));
      });
    });
    expect(await api.get("/api/v1/nodes", { labelSelector: "a=b", limit: 5, continue: undefined })).toEqual({
      method: "GET",
    });
    await api.create("/api/v1/namespaces/ns/events", { reason: "x" });
    await api.mergePatch("/apis/g/v1/things/t/status", { status: { a: null } });
    await api.delete("/apis/g/v1/things/t");
    expect(
      requests.map((r) => [r.method, r.url, r.headers.authorization, r.headers["content-type"]]),
    ).toEqual([
      ["GET", "/api/v1/nodes?labelSelector=a%3Db&limit=5", "Bearer s3cret", undefined],
      ["POST", "/api/v1/namespaces/ns/events", "Bearer s3cret", "application/json"],
      ["PATCH", "/apis/g/v1/things/t/status", "Bearer s3cret", "application/merge-patch+json"],
      ["DELETE", "/apis/g/v1/things/t", "Bearer s3cret", undefined],
    ]);
    expect(bodies).toEqual(["", '{"reason":"x"}', '{"status":{"a":null}}', ""]);
  });

  test("an error answer becomes a KubeApiError with the HTTP status and the apiserver's message", async () => {
    const { api } = await serve((req, res) => {
      res.statusCode = req.url!.includes("plain") ? 503 : 404;
      res.end(
        req.url!.includes("plain")
          ? ""
          : JSON.stringify({ kind: "Status", reason: "NotFound", message: 'secrets "x" not found' }),
      );
    });
    const missing = await api.get("/api/v1/secrets/x").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(KubeApiError);
    expect(missing).toMatchObject({ code: 404, reason: "NotFound", message: 'secrets "x" not found' });
    await expect(api.get("/plain")).rejects.toMatchObject({
      code: 503,
      message: "HTTP 503 Service Unavailable",
    });
  });

  test("a watch streams events split across chunks, and ends without an error when the server ends it", async () => {
    const { api, requests } = await serve((_req, res) => {
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
      setTimeout(() => res.end('FIED","object":{"metadata":{"name":"a","x":1}}}\n'), 20);
    });
    const events: unknown[] = [];
    const err = await new Promise((resolve) => {
      api.watch(
        "/api/v1/nodes",
        { resourceVersion: "5" },
        (type, object) => events.push([type, object]),
        resolve,
        5000,
      );
    });
    expect(err).toBeUndefined();
    expect(events).toEqual([
      ["ADDED", { metadata: { name: "a" } }],
      ["MODIFIED", { metadata: { name: "a", x: 1 } }],
    ]);
    expect(requests[0]!.url).toBe("/api/v1/nodes?resourceVersion=5&watch=true");
  });

  test("a watch that hears nothing for its idle time fails; one refused fails with the status", async () => {
    const { api } = await serve((req, res) => {
      if (req.url!.startsWith("/forbidden")) {
        res.statusCode = 403;
        res.end(JSON.stringify({ kind: "Status", message: "nodes is forbidden" }));
      } else {
        res.writeHead(200);
        res.flushHeaders();
      }
    });
    const silent = await new Promise((resolve) => api.watch("/quiet", {}, () => undefined, resolve, 200));
    expect((silent as Error).message).toBe("no word from the apiserver for 200 ms");
    const refused = await new Promise((resolve) =>
      api.watch("/forbidden", {}, () => undefined, resolve, 5000),
    );
    expect(refused).toMatchObject({ code: 403, message: "nodes is forbidden" });
  });

  test("an aborted watch ends without an error", async () => {
    const { api } = await serve((_req, res) => {
      res.writeHead(200);
      res.flushHeaders();
    });
    const ended = new Promise((resolve) => {
      const watching = api.watch("/x", {}, () => undefined, resolve, 5000);
      setTimeout(() => watching.abort(), 50);
    });
    expect(await ended).toBeUndefined();
  });

  test("resource paths: core and grouped kinds, namespaced or not, with a subresource", () => {
    expect(resourcePath({ group: "", version: "v1", plural: "events", namespace: "ns" })).toBe(
      "/api/v1/namespaces/ns/events",
    );
    expect(
      resourcePath({
        group: "portico.io",
        version: "v1alpha1",
        plural: "bgppeers",
        name: "p",
        subresource: "status",
      }),
    ).toBe("/apis/portico.io/v1alpha1/bgppeers/p/status");
  });
});
