import { describe, expect, test } from "vitest";
import { putThenRead, type RawResponseCallback } from "./lro.ts";

type R = { etag?: string; provisioningState?: string; ipAddress?: string };

/** A PUT answering with `etag`, whose operation's own poller resolves with `final` (counted when awaited). */
function put(etag: string | undefined, final: R | Error) {
  const counts = { pollerAwaited: 0 };
  const start = (onResponse: RawResponseCallback) => ({
    submitted: () => {
      onResponse({ parsedBody: etag ? { etag } : {}, headers: { get: () => undefined } });
      return Promise.resolve();
    },
    then<A, B>(ok?: (v: R) => A | PromiseLike<A>, fail?: (e: unknown) => B | PromiseLike<B>) {
      counts.pollerAwaited++;
      const p = final instanceof Error ? Promise.reject(final) : Promise.resolve(final);
      return p.then(ok, fail);
    },
  });
  return { start, counts };
}

const reads = (...answers: R[]) => {
  const seen: number[] = [];
  return { seen, read: () => (seen.push(1), Promise.resolve(answers.shift()!)) };
};
const noSleep = () => Promise.resolve();

describe("putThenRead", () => {
  test("one read of the resource done under the PUT's etag is the result: the operation is not polled", async () => {
    const { start, counts } = put('W/"1"', new Error("not polled"));
    const { read, seen } = reads({ etag: 'W/"1"', provisioningState: "Succeeded", ipAddress: "198.18.0.1" });
    expect(await putThenRead(start, read, 0, noSleep)).toMatchObject({ ipAddress: "198.18.0.1" });
    expect([seen.length, counts.pollerAwaited]).toEqual([1, 0]);
  });

  test("reads again while it is Updating", async () => {
    const { start } = put('W/"1"', new Error("not polled"));
    const { read, seen } = reads(
      { etag: 'W/"1"', provisioningState: "Updating" },
      { etag: 'W/"1"', provisioningState: "Succeeded" },
    );
    expect(await putThenRead(start, read, 0, noSleep)).toMatchObject({ provisioningState: "Succeeded" });
    expect(seen).toHaveLength(2);
  });

  test("a Failed resource is the operation's to explain: its poller's error is what the caller gets", async () => {
    const { start, counts } = put(
      'W/"1"',
      new Error("The long-running operation has failed. InternalError. x"),
    );
    const { read } = reads({ etag: 'W/"1"', provisioningState: "Failed" });
    await expect(putThenRead(start, read, 0, noSleep)).rejects.toThrow("InternalError");
    expect(counts.pollerAwaited).toBe(1);
  });

  test("another etag (someone wrote after it) is not taken for this write: the operation tells", async () => {
    const { start, counts } = put('W/"1"', { etag: 'W/"1"', provisioningState: "Succeeded" });
    const { read } = reads({ etag: 'W/"2"', provisioningState: "Succeeded" });
    expect(await putThenRead(start, read, 0, noSleep)).toMatchObject({ etag: 'W/"1"' });
    expect(counts.pollerAwaited).toBe(1);
  });

  test("without an etag in the answer, the operation is polled as the SDK does", async () => {
    const { start, counts } = put(undefined, { provisioningState: "Succeeded" });
    const { read, seen } = reads();
    await putThenRead(start, read, 0, noSleep);
    expect([seen.length, counts.pollerAwaited]).toEqual([0, 1]);
  });
});
