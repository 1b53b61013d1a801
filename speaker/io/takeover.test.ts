import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { decodeArp } from "../packets/arp.ts";
import { decodeEthernet } from "../packets/ethernet.ts";
import { TakeoverAnnouncements, type TakeoverTarget } from "./takeover.ts";

class Recorder implements TakeoverTarget {
  readonly name = "eth0";
  readonly mac = "02:00:00:00:00:01";
  readonly frames: { at: number; frame: Buffer }[] = [];
  send(frames: readonly Buffer[]): number {
    for (const frame of frames) this.frames.push({ at: Date.now(), frame });
    return frames.length;
  }
}

describe("takeover announcements", () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  test("a burst of gratuitous ARP request and reply at 0, 500 and 1000 ms", () => {
    const target = new Recorder();
    const takeover = new TakeoverAnnouncements(
      { burstOffsetsMs: [0, 500, 1000], periodicMs: 0 },
      () => [target],
      () => undefined,
    );
    takeover.update(new Set(["192.0.2.100"]));
    vi.advanceTimersByTime(5000);
    expect(target.frames.map((f) => f.at)).toEqual([0, 0, 500, 500, 1000, 1000]);
    const ops = target.frames.slice(0, 2).map(({ frame }) => {
      const ethernet = decodeEthernet(frame);
      const arp = ethernet.ok ? decodeArp(ethernet.value.payload) : undefined;
      return arp?.ok
        ? [
            ethernet.ok && ethernet.value.destination,
            arp.value.operation,
            arp.value.senderIp,
            arp.value.targetIp,
          ]
        : [];
    });
    expect(ops).toEqual([
      ["ff:ff:ff:ff:ff:ff", "request", "192.0.2.100", "192.0.2.100"],
      ["ff:ff:ff:ff:ff:ff", "reply", "192.0.2.100", "192.0.2.100"],
    ]);
  });

  test("an address lost during the burst is never announced again", () => {
    const target = new Recorder();
    const takeover = new TakeoverAnnouncements(
      { burstOffsetsMs: [0, 500, 1000], periodicMs: 2000 },
      () => [target],
      () => undefined,
    );
    takeover.update(new Set(["2001:db8::100"]));
    vi.advanceTimersByTime(600);
    takeover.update(new Set());
    vi.advanceTimersByTime(10_000);
    expect(target.frames.map((f) => f.at)).toEqual([0, 500]);
  });

  test("optionally re-announces periodically after the burst", () => {
    const target = new Recorder();
    const counted: number[] = [];
    const takeover = new TakeoverAnnouncements(
      { burstOffsetsMs: [0], periodicMs: 1000 },
      () => [target],
      (_t, _p, n) => counted.push(n),
    );
    takeover.update(new Set(["2001:db8::100"]));
    vi.advanceTimersByTime(3500);
    expect(target.frames.map((f) => f.at)).toEqual([0, 1000, 2000, 3000]);
    expect(counted).toEqual([1, 1, 1, 1]);
    takeover.stop();
    vi.advanceTimersByTime(5000);
    expect(target.frames).toHaveLength(4);
  });
});
