import { describe, expect, test } from "vitest";
import { arpReplyFrame } from "../packets/arp.ts";
import { AddressProber, type ProbeTarget } from "./prober.ts";

const OWN = "02:00:00:00:00:01";
const PEER = "02:00:00:00:00:02";
const STRANGER = "02:00:00:00:00:03";
const ADDRESS = "192.0.2.50";
// Steps of a millisecond: the outcome depends on what was heard, not on how long anything took.
const FAST = { count: 3, intervalMs: 1, waitMs: 1 };

/** An answer to this node's probe from `mac`, claiming the address. */
const answer = (mac: string) =>
  arpReplyFrame({ senderMac: mac, senderIp: ADDRESS, targetMac: OWN, targetIp: "0.0.0.0" });

/** A target whose first probe is answered by `answerers`, as the LAN would within the probe. */
function lan(prober: AddressProber, answerers: string[]): () => ProbeTarget[] {
  const target: ProbeTarget = {
    mac: OWN,
    send: (frames) => {
      for (const mac of answerers.splice(0)) prober.seen(answer(mac));
      return frames.length;
    },
  };
  return () => [target];
}

describe("AddressProber", () => {
  test("nobody answers: free", async () => {
    const prober = new AddressProber(() => new Set([OWN]), FAST);
    expect(await prober.probe(ADDRESS, lan(prober, []))).toBeUndefined();
  });

  test("another host answers: its MAC", async () => {
    const prober = new AddressProber(() => new Set([OWN]), FAST);
    expect(await prober.probe(ADDRESS, lan(prober, [STRANGER]))).toBe(STRANGER);
  });

  test("this node's own interfaces are never a conflict", async () => {
    const prober = new AddressProber(() => new Set([OWN]), FAST);
    expect(await prober.probe(ADDRESS, lan(prober, [OWN]))).toBeUndefined();
  });

  test("a speaker handing the address over is no conflict, though it answers", async () => {
    const holders = new Set<string>();
    const prober = new AddressProber(
      () => new Set([OWN]),
      FAST,
      (mac) => holders.has(mac),
    );
    const targets = lan(prober, [PEER]);
    // The holder's question arrives after its answer: what counts is what is known when the probe judges.
    const probing = prober.probe(ADDRESS, targets);
    holders.add(PEER);
    expect(await probing).toBeUndefined();
  });

  test("a stranger answering alongside a handing-over speaker is still found", async () => {
    const prober = new AddressProber(
      () => new Set([OWN]),
      FAST,
      (mac) => mac === PEER,
    );
    expect(await prober.probe(ADDRESS, lan(prober, [PEER, STRANGER]))).toBe(STRANGER);
  });
});
