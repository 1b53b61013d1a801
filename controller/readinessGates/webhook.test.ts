import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { pino } from "pino";
import { describe, expect, test } from "vitest";
import { silentLogger, type Logger } from "../../shared/log.ts";
import { gateType } from "./gates.ts";
import { admitPod, type PodAdmission } from "./webhook.ts";

const web: V1Service = {
  metadata: { name: "web", namespace: "shop" },
  spec: { type: "LoadBalancer", selector: { app: "web" } },
};
const pod: V1Pod = { metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [] } };

function admission(services: V1Service[] | Error, sendsToPods = true): PodAdmission & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    services: (namespace) => {
      asked.push(namespace);
      return services instanceof Error ? Promise.reject(services) : Promise.resolve(services);
    },
    sendsToPods: () => sendsToPods,
    log: silentLogger(),
  };
}

/** A logger whose lines (their messages) go to `lines`. */
const recordingLogger = (lines: string[]): Logger =>
  pino({ level: "info" }, { write: (line: string) => lines.push((JSON.parse(line) as { msg: string }).msg) });

const request = (over: Record<string, unknown> = {}) => ({
  uid: "u1",
  kind: { kind: "Pod" },
  operation: "CREATE",
  namespace: "shop",
  object: pod,
  ...over,
});

const decode = (patch: string | undefined) => JSON.parse(Buffer.from(patch!, "base64").toString()) as unknown;

describe("the webhook's answer", () => {
  test("a new pod of a Service with pod targets gets its gate, as a JSON Patch", async () => {
    const a = admission([web]);
    const answer = await admitPod(request(), a);
    expect(a.asked).toEqual(["shop"]);
    expect(answer).toMatchObject({ uid: "u1", allowed: true, patchType: "JSONPatch" });
    expect(decode(answer.patch)).toEqual([
      { op: "add", path: "/spec/readinessGates", value: [{ conditionType: gateType("web") }] },
      { op: "add", path: "/metadata/labels/portico.io~1readiness-gated", value: "true" },
    ]);
  });

  test("nothing to add: allowed unchanged", async () => {
    expect(await admitPod(request(), admission([web], false))).toEqual({ uid: "u1", allowed: true });
    expect(await admitPod(request(), admission([]))).toEqual({ uid: "u1", allowed: true });
  });

  test("anything but a pod's creation is let through without reading Services", async () => {
    for (const over of [{ operation: "UPDATE" }, { kind: { kind: "Service" } }, { object: undefined }]) {
      const a = admission([web]);
      expect(await admitPod(request(over), a)).toEqual({ uid: "u1", allowed: true });
      expect(a.asked).toEqual([]);
    }
  });

  test("Services that cannot be read in a namespace that did not opt in: made without gates, with a warning", async () => {
    const logged: string[] = [];
    const a = { ...admission(new Error("connection refused")), log: recordingLogger(logged) };
    const answer = await admitPod(request(), a, true);
    expect(answer).toEqual({
      uid: "u1",
      allowed: true,
      warnings: ["made without Portico's readiness gates: the Services of namespace shop could not be read"],
    });
    // The log says why, and how to have such pods refused instead.
    expect(logged.join("\n")).toMatch(
      /could not read the Services of namespace shop.*connection refused; the pod is made without them \(label the namespace portico\.io\/pod-readiness-gate-inject=enabled/,
    );
    // When they can be read, the same gates as in a namespace that opted in.
    expect(await admitPod(request(), admission([web]), true)).toEqual(
      await admitPod(request(), admission([web])),
    );
  });

  test("Services that cannot be read in a namespace that opted in: refused with why, so the pod's owner tries again", async () => {
    const answer = await admitPod(request(), admission(new Error("connection refused")));
    expect(answer.allowed).toBe(false);
    expect(answer.status?.code).toBe(503);
    expect(answer.status?.message).toMatch(
      /could not read the Services of namespace shop.*connection refused/,
    );
  });
});
