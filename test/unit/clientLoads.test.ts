// How the benchmarks count what a client saw: long-lived connections cut or ended (test/harness/longLivedLoad.ts),
// and the outages of a load of new connections (test/harness/localCluster/usage.ts).
import { describe, expect, test } from "vitest";
import { connectionOutcomes, type HeldRequest } from "../harness/longLivedLoad.ts";
import { outages } from "../harness/localCluster/usage.ts";

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

describe("outages of a client load", () => {
  const at = (start: number, ok: boolean) => ({ start, ms: 1, ok });

  test("the longest stretch runs from a failure to the next success; one still open at the end counts too", () => {
    expect(outages([at(0, true), at(50, false), at(100, false), at(150, true)])).toEqual({
      failed: 2,
      total: 4,
      longestMs: 100,
    });
    // The load stopped while nothing got through: the outage is as long as the load saw it.
    expect(
      outages([at(0, true), at(50, false), at(100, true), at(150, false), at(400, false)]).longestMs,
    ).toBe(250);
    expect(outages([at(0, true), at(50, true)]).longestMs).toBe(0);
  });
});
