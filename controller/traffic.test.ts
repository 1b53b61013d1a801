import { describe, expect, it } from "vitest";
import { servingCondition, servingEvent, TRAFFIC_POLL_MAX_MS, trafficPollDelay } from "./traffic.ts";

const healthy = { flowing: true, reason: "TargetsHealthy", message: "2 of 2 targets healthy" };
const none = { flowing: false, reason: "NoTargets", message: "no target is registered" };
const pending = { flowing: undefined, reason: "HealthChecksPending", message: "2 targets in initial" };

describe("the Serving condition", () => {
  it("is True, False or Unknown as traffic flows, does not, or is not known to", () => {
    expect(servingCondition(healthy).status).toBe("True");
    expect(servingCondition(none)).toEqual({
      status: "False",
      reason: "NoTargets",
      message: "no target is registered",
    });
    expect(servingCondition(pending).status).toBe("Unknown");
  });
});

describe("Events on the way", () => {
  it("warns when traffic stops or never starts, and again only when the cause changes", () => {
    expect(servingEvent(undefined, none)).toMatchObject({ type: "Warning", reason: "NoTargets" });
    expect(servingEvent({ status: "True", reason: "TargetsHealthy" }, none)?.type).toBe("Warning");
    expect(servingEvent({ status: "False", reason: "NoTargets" }, none)).toBeUndefined();
    const unhealthy = { flowing: false, reason: "TargetsUnhealthy", message: "0 of 2 healthy" };
    expect(servingEvent({ status: "False", reason: "NoTargets" }, unhealthy)?.reason).toBe(
      "TargetsUnhealthy",
    );
  });

  it("says so when traffic recovers, and says nothing when it simply flows", () => {
    expect(servingEvent({ status: "False", reason: "NoTargets" }, healthy)).toMatchObject({
      type: "Normal",
      message: "Traffic reaches backends again: 2 of 2 targets healthy",
    });
    expect(servingEvent(undefined, healthy)).toBeUndefined();
    expect(servingEvent({ status: "Unknown" }, healthy)).toBeUndefined();
    // Back through Unknown (new targets in their first checks) after being down: still a recovery.
    expect(servingEvent({ status: "Unknown" }, healthy, true)?.type).toBe("Normal");
    expect(servingEvent(undefined, pending)).toBeUndefined();
  });
});

describe("looking again", () => {
  it("never while traffic flows; otherwise backing off to a cap", () => {
    expect(trafficPollDelay(healthy, 3)).toBeUndefined();
    const delays = [0, 1, 2, 3, 10, 20].map((n) => trafficPollDelay(pending, n));
    expect(delays.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(delays[4]).toBe(TRAFFIC_POLL_MAX_MS);
    expect(delays[5]).toBe(TRAFFIC_POLL_MAX_MS);
    expect(trafficPollDelay(none, 0)).toBe(5_000);
  });

  it("never while only the cluster can change the verdict (the watches bring the Service back then)", () => {
    const noEndpoints = {
      flowing: false,
      reason: "NoReadyEndpoints",
      message: "no ready endpoint",
      untilClusterChanges: true as const,
    };
    expect(trafficPollDelay(noEndpoints, 0)).toBeUndefined();
    expect(trafficPollDelay({ ...none, untilClusterChanges: true }, 4)).toBeUndefined();
  });
});
