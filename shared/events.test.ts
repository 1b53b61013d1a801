import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterEach, expect, test, vi } from "vitest";
import { EventRecorder } from "./events.ts";

/** An apiserver that keeps Events by name, as the recorder sees them. */
function fakeCore() {
  const calls: string[] = [];
  const core = {
    createNamespacedEvent: (req: { body: { metadata: { name: string }; count: number } }) => {
      calls.push(`create ${req.body.metadata.name.split(".")[0]} count=${req.body.count}`);
      return Promise.resolve({});
    },
    patchNamespacedEvent: (req: { name: string; body: { count: number } }) => {
      calls.push(`patch ${req.name.split(".")[0]} count=${req.body.count}`);
      return Promise.resolve({});
    },
  };
  return { core: core as unknown as CoreV1Api, calls };
}

const svc = (name: string): V1Service => ({ metadata: { name, namespace: "ns", uid: `uid-${name}` } });

afterEach(() => vi.useRealTimers());

test("an Event recorded again is counted on the same object; counts are forgotten once the apiserver let it expire", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
  const { core, calls } = fakeCore();
  const recorder = new EventRecorder(core, pino({ level: "silent" }));
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
  const { core, calls } = fakeCore();
  const recorder = new EventRecorder(core, pino({ level: "silent" }));
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  vi.setSystemTime(new Date("2026-01-01T00:50:00Z"));
  await recorder.record(svc("b"), "Normal", "Fine", "it is fine");
  await recorder.record(svc("a"), "Warning", "Broken", "it is broken");
  expect(calls).toEqual(["create a count=1", "create b count=1", "patch a count=2"]);
});
