import type { V1Service } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterEach, expect, test, vi } from "vitest";
import { EventRecorder, type EventApi, type EventSource } from "./events.ts";

const CONTROLLER: EventSource = { component: "portico-controller", aggregate: true };

/** An apiserver that keeps Events by name, as the recorder sees them. */
function fakeApi() {
  const calls: string[] = [];
  const bodies: Record<string, unknown>[] = [];
  const api: EventApi = {
    create: (_namespace, body) => {
      const b = body as { metadata: { name: string }; count: number };
      bodies.push(body as Record<string, unknown>);
      calls.push(`create ${b.metadata.name.split(".")[0]} count=${b.count}`);
      return Promise.resolve({});
    },
    mergePatch: (_namespace, name, body) => {
      calls.push(`patch ${name.split(".")[0]} count=${(body as { count: number }).count}`);
      return Promise.resolve({});
    },
  };
  return { api, calls, bodies };
}

const svc = (name: string): V1Service => ({ metadata: { name, namespace: "ns", uid: `uid-${name}` } });

afterEach(() => vi.useRealTimers());

test("an Event recorded again is counted on the same object; counts are forgotten once the apiserver let it expire", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
  const { api, calls } = fakeApi();
  const recorder = new EventRecorder(api, pino({ level: "silent" }), CONTROLLER);
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  await recorder.record(svc("b"), "Normal", "Fine", "it is fine");
  expect(calls).toEqual(["create a count=1", "patch a count=2", "create b count=1"]);

  // An hour and more later the apiserver has deleted both: recorded again, each is made anew.
  vi.setSystemTime(new Date("2026-01-01T01:30:00Z"));
  calls.length = 0;
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  expect(calls).toEqual(["create a count=1", "patch a count=2"]);
});

test("a count younger than an hour is kept across a sweep", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
  const { api, calls } = fakeApi();
  const recorder = new EventRecorder(api, pino({ level: "silent" }), CONTROLLER);
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  vi.setSystemTime(new Date("2026-01-01T00:50:00Z"));
  await recorder.record(svc("b"), "Normal", "Fine", "it is fine");
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  expect(calls).toEqual(["create a count=1", "create b count=1", "patch a count=2"]);
});

test("without counting (the speaker's), each event is its own object, from its node", async () => {
  const { api, calls, bodies } = fakeApi();
  const recorder = new EventRecorder(api, pino({ level: "silent" }), {
    component: "portico-speaker",
    host: "node-1",
    aggregate: false,
  });
  await recorder.record(svc("a"), "Normal", "nodeAssigned", "announcing from node-1");
  await recorder.record(svc("a"), "Normal", "nodeAssigned", "announcing from node-1");
  expect(calls).toEqual(["create a count=1", "create a count=1"]);
  const names = bodies.map((b) => (b.metadata as { name: string }).name);
  expect(new Set(names).size).toBe(2);
  expect(bodies[0]).toMatchObject({
    source: { component: "portico-speaker", host: "node-1" },
    reportingComponent: "portico-speaker",
    reportingInstance: "node-1",
    involvedObject: { kind: "Service", name: "a", namespace: "ns", uid: "uid-a" },
  });
});

test("a conflict (made before a restart) is counted afresh; other failures are logged, never thrown", async () => {
  const calls: string[] = [];
  let created = 0;
  const api: EventApi = {
    create: () => {
      calls.push("create");
      // The first create meets an Event of the same name from before the restart.
      return created++ === 0
        ? Promise.reject(Object.assign(new Error("exists"), { code: 409 }))
        : Promise.resolve({});
    },
    mergePatch: () => {
      calls.push("patch");
      return Promise.reject(Object.assign(new Error("forbidden"), { code: 403 }));
    },
  };
  const recorder = new EventRecorder(api, pino({ level: "silent" }), CONTROLLER);
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  await expect(recorder.record(svc("a"), "Warning", "Broken", "it is broken")).resolves.toBeUndefined();
  expect(calls).toEqual(["create", "patch", "patch"]);
});
