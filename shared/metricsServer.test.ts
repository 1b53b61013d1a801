// The metrics server's listen address (both programs' --metrics-address) and its answers.
import type { AddressInfo } from "node:net";
import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { listenAddress, serveMetrics } from "./metricsServer.ts";

describe("the listen address", () => {
  it("takes host:port, [ipv6]:port and :port", () => {
    expect(listenAddress("0.0.0.0:8080")).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(listenAddress("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(listenAddress("[::]:9100")).toEqual({ host: "::", port: 9100 });
    expect(listenAddress(":8080")).toEqual({ host: undefined, port: 8080 });
  });

  it("refuses what has no port", () => {
    for (const bad of ["localhost", "1.2.3.4:http", "[::1]:", ":99999"])
      expect(() => listenAddress(bad), bad).toThrow(/not a listen address/);
  });
});

describe("the server", () => {
  it("serves metrics and both probes, on IPv4 and IPv6 loopback", async () => {
    const registry = new Registry();
    new Counter({ name: "portico_test_total", help: "a test counter", registers: [registry] }).inc();
    let ready = false;
    for (const address of ["127.0.0.1:0", "[::1]:0"]) {
      const server = await serveMetrics(address, registry, {
        ready: () => ready,
        notReady: "caches not synced",
      });
      try {
        const { address: host, port } = server.address() as AddressInfo;
        const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
        const get = async (path: string) => {
          const res = await fetch(`${base}${path}`);
          return [res.status, await res.text()] as const;
        };
        expect(await get("/healthz")).toEqual([200, "ok"]);
        ready = false;
        expect(await get("/readyz")).toEqual([503, "caches not synced"]);
        ready = true;
        expect(await get("/readyz")).toEqual([200, "ok"]);
        const [code, text] = await get("/metrics");
        expect(code).toBe(200);
        expect(text).toContain("portico_test_total 1");
        expect((await get("/nothing"))[0]).toBe(404);
      } finally {
        server.close();
      }
    }
  });
});
