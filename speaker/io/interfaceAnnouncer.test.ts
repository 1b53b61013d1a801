import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { arpRequestFrame, decodeArp } from "../packets/arp.ts";
import { ndpFrame } from "../packets/announce.ts";
import { decodeEthernet } from "../packets/ethernet.ts";
import { encodeNeighborSolicitation, solicitedNodeMulticast } from "../packets/ndp.ts";
import type { PacketAddon, SocketHandle } from "./addon.ts";
import { InterfaceAnnouncer, type AnnouncerHooks } from "./interfaceAnnouncer.ts";

const MAC = "02:00:00:00:00:01";
const CLIENT_MAC = "02:00:00:00:00:99";

/** The addon's contract without a kernel: frames are delivered by the test, sends are recorded. */
class FakeAddon implements PacketAddon {
  deliver: (frames: Buffer[], errno: number) => void = () => undefined;
  readonly sent: Buffer[] = [];
  readonly memberships: [string, boolean][] = [];
  closed = false;
  open(_name: string, onFrames: (frames: Buffer[], errno: number) => void): SocketHandle {
    this.deliver = onFrames;
    return {} as SocketHandle;
  }
  send(_handle: SocketHandle, frame: Buffer): number {
    this.sent.push(frame);
    return 0;
  }
  multicast(_handle: SocketHandle, mac: Buffer, join: boolean): void {
    this.memberships.push([[...mac].map((b) => b.toString(16).padStart(2, "0")).join(":"), join]);
  }
  stats() {
    return { received: 0, truncated: 0, vlanTagged: 0, kernelDrops: 0, linkDown: 0 };
  }
  close(): void {
    this.closed = true;
  }
  interfaces() {
    return [];
  }
}

function setup(maxRepliesPerSecond = 0) {
  const addon = new FakeAddon();
  const counts = { received: 0, replied: 0, dropped: new Map<string, number>(), failed: 0 };
  const hooks: AnnouncerHooks = {
    received: (n) => (counts.received += n),
    replied: () => counts.replied++,
    dropped: (reason, n = 1) => counts.dropped.set(reason, (counts.dropped.get(reason) ?? 0) + n),
    sendFailed: () => undefined,
    groupFailed: () => undefined,
    failed: () => counts.failed++,
  };
  const announcer = new InterfaceAnnouncer(addon, { name: "eth0", mac: MAC }, { maxRepliesPerSecond }, hooks);
  return { addon, counts, announcer };
}

const whoHas = (targetIp: string) =>
  arpRequestFrame({ senderMac: CLIENT_MAC, senderIp: "192.0.2.2", targetIp });

const solicit = (target: string) =>
  ndpFrame(
    encodeNeighborSolicitation({ source: "2001:db8::2", target, sourceLinkLayerAddress: CLIENT_MAC }),
    solicitedNodeMulticast(target),
    undefined,
    CLIENT_MAC,
  );

describe("interface announcer", () => {
  test("answers ARP for owned addresses with the interface's MAC, and nothing else", () => {
    const { addon, counts, announcer } = setup();
    announcer.setOwned(new Set(["192.0.2.100"]));
    addon.deliver([whoHas("192.0.2.100"), whoHas("192.0.2.101")], 0);
    expect(addon.sent).toHaveLength(1);
    const reply = decodeEthernet(addon.sent[0]!);
    expect(reply.ok && reply.value.destination).toBe(CLIENT_MAC);
    const arp = reply.ok ? decodeArp(reply.value.payload) : undefined;
    expect(arp?.ok && arp.value).toMatchObject({
      operation: "reply",
      senderMac: MAC,
      senderIp: "192.0.2.100",
    });
    expect(counts).toMatchObject({ received: 2, replied: 1 });
  });

  test("stops answering the moment the address is taken away", () => {
    const { addon, announcer } = setup();
    announcer.setOwned(new Set(["192.0.2.100"]));
    addon.deliver([whoHas("192.0.2.100")], 0);
    announcer.setOwned(new Set());
    addon.deliver([whoHas("192.0.2.100")], 0);
    expect(addon.sent).toHaveLength(1);
  });

  test("answers Neighbor Solicitations and joins each owned address's solicited-node group once", () => {
    const { addon, announcer } = setup();
    // These two share their low 24 bits, so the same group (and multicast MAC).
    announcer.setOwned(new Set(["2001:db8::1:1:100", "2001:db8::2:1:100"]));
    expect(addon.memberships).toEqual([["33:33:ff:01:01:00", true]]);
    addon.deliver([solicit("2001:db8::1:1:100"), solicit("2001:db8::3:1:100")], 0);
    expect(addon.sent).toHaveLength(1);
    announcer.setOwned(new Set(["2001:db8::2:1:100"]));
    expect(addon.memberships).toHaveLength(1);
    announcer.setOwned(new Set());
    expect(addon.memberships).toEqual([
      ["33:33:ff:01:01:00", true],
      ["33:33:ff:01:01:00", false],
    ]);
  });

  test("drops and counts malformed and hostile frames without throwing", () => {
    const { addon, counts, announcer } = setup();
    announcer.setOwned(new Set(["192.0.2.100", "2001:db8::100"]));
    const truncated = whoHas("192.0.2.100").subarray(0, 30);
    const badChecksum = Buffer.from(solicit("2001:db8::100"));
    badChecksum.writeUInt8(badChecksum.readUInt8(60) ^ 0xff, 60);
    const garbage = Array.from({ length: 500 }, (_, i) => randomBytes(i % 90));
    expect(() => addon.deliver([truncated, badChecksum, Buffer.alloc(0), ...garbage], 0)).not.toThrow();
    expect(addon.sent).toHaveLength(0);
    expect(counts.dropped.get("Truncated")).toBeGreaterThan(0);
    expect(counts.dropped.get("BadChecksum")).toBe(1);
  });

  test("limits replies per second, so a flood costs bounded work and bandwidth", () => {
    const { addon, counts, announcer } = setup(10);
    announcer.setOwned(new Set(["192.0.2.100"]));
    addon.deliver(
      Array.from({ length: 100 }, () => whoHas("192.0.2.100")),
      0,
    );
    expect(addon.sent.length).toBeLessThanOrEqual(11);
    expect(addon.sent.length).toBeGreaterThanOrEqual(10);
    expect(counts.dropped.get("RateLimited")).toBe(100 - addon.sent.length);
  });

  test("a failed socket closes itself and says so", () => {
    const { addon, counts, announcer } = setup();
    announcer.setOwned(new Set(["192.0.2.100"]));
    addon.deliver([], 19);
    expect(addon.closed).toBe(true);
    expect(counts.failed).toBe(1);
    expect(announcer.send([whoHas("192.0.2.100")])).toBe(0);
  });
});
