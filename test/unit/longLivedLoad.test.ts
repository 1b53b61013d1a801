// How the benchmarks count what happened to long-lived connections (test/harness/longLivedLoad.ts).
import { describe, expect, test } from "vitest";
import { connectionOutcomes, type HeldRequest } from "../harness/longLivedLoad.ts";

const req = (slot: number, conn: number, reused: boolean, ok: boolean): HeldRequest => ({
  start: 0,
  ms: 1,
  slot,
  conn,
  reused,
  ok,
  ...(ok ? { pod: "p" } : { error: "ECONNRESET" }),
});

describe("long-lived connection outcomes", () => {
  test("a request failing on a connection that carried one is a cut; one the server ended is a replacement", () => {
    const results = [
      // Slot 0: connection 1 carries two requests, is cut, connection 3 takes over.
      req(0, 1, false, true),
      req(0, 1, true, true),
      req(0, 1, true, false),
      req(0, 3, false, true),
      // Slot 1: connection 2 ended by the server between requests (Connection: close), connection 4 opened.
      req(1, 2, false, true),
      req(1, 4, false, true),
      req(1, 4, true, true),
    ];
    expect(connectionOutcomes(results)).toEqual({ requests: 7, failed: 1, cut: 1, replaced: 2 });
  });

  test("a failed first request on a new connection is a failed request, no cut", () => {
    expect(connectionOutcomes([req(0, 1, false, false), req(0, 2, false, true)])).toEqual({
      requests: 2,
      failed: 1,
      cut: 0,
      replaced: 1,
    });
  });

  test("a connection failing twice is cut once", () => {
    expect(
      connectionOutcomes([req(0, 1, false, true), req(0, 1, true, false), req(0, 1, true, false)]).cut,
    ).toBe(1);
  });
});
