import { describe, expect, it } from "vitest";
import { arpReplyFrame, arpRequestFrame, decodeArp, gratuitousArpFrame } from "./arp.ts";
import { ndpFrame } from "./announce.ts";
import { decodeEthernet, encodeEthernet, type VlanTag } from "./ethernet.ts";
import { decodeIPv6, encodeIPv6 } from "./ipv6.ts";
import { decodeNdp, encodeNeighborAdvertisement, encodeNeighborSolicitation } from "./ndp.ts";
import { respond, type Response } from "./respond.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ""), "hex");
const OUR_MAC = "02:00:00:00:00:01";
const PEER_MAC = "00:11:22:33:44:55";
const PEER_V6 = "fe80::211:22ff:fe33:4455";
const owned = new Set(["192.168.1.1", "fd00::10"]);
const vlan42: VlanTag[] = [{ tpid: 0x8100, priority: 0, dropEligible: false, vlanId: 42 }];

function replyFrame(response: Response): Buffer {
  if (response.action !== "reply") throw new Error(`expected a reply, got ${JSON.stringify(response)}`);
  return response.frame;
}

function ndpReply(response: Response) {
  const ethernet = decodeEthernet(replyFrame(response));
  if (!ethernet.ok) throw new Error(ethernet.detail);
  const ipv6 = decodeIPv6(ethernet.value.payload);
  if (!ipv6.ok) throw new Error(ipv6.detail);
  const ndp = decodeNdp(ipv6.value);
  if (!ndp.ok) throw new Error(ndp.detail);
  return { ethernet: ethernet.value, ipv6: ipv6.value, ndp: ndp.value };
}

const arpRequest = (targetIp: string, senderIp = "192.168.1.100", vlanTags: VlanTag[] = []) =>
  arpRequestFrame({ senderMac: PEER_MAC, senderIp, targetIp }, { vlanTags });

const solicitation = (
  target: string,
  options: { source?: string; slla?: boolean; hopLimit?: number } = {},
) => {
  const source = options.source ?? PEER_V6;
  const packet = encodeNeighborSolicitation({
    source,
    target,
    ...(options.slla === false || source === "::" ? {} : { sourceLinkLayerAddress: PEER_MAC }),
  });
  if (options.hopLimit !== undefined) packet[7] = options.hopLimit;
  return ndpFrame(packet, "ff02::1:ff00:10", undefined, PEER_MAC);
};

describe("respond to ARP", () => {
  it("answers a request for an owned address with the byte-exact reply", () => {
    const response = respond(arpRequest("192.168.1.1"), owned, OUR_MAC);
    expect(response).toMatchObject({ action: "reply", protocol: "arp", address: "192.168.1.1" });
    expect(replyFrame(response)).toEqual(
      hex(`
        00 11 22 33 44 55   02 00 00 00 00 01   08 06
        00 01 08 00 06 04 00 02
        02 00 00 00 00 01   c0 a8 01 01
        00 11 22 33 44 55   c0 a8 01 64
      `),
    );
  });

  it("replies on the VLAN the request came in on", () => {
    const reply = replyFrame(respond(arpRequest("192.168.1.1", "192.168.1.100", vlan42), owned, OUR_MAC));
    expect(decodeEthernet(reply)).toMatchObject({ ok: true, value: { vlanTags: vlan42 } });
  });

  it("answers an RFC 5227 probe (sender 0.0.0.0) so the prober sees a conflict", () => {
    const reply = replyFrame(respond(arpRequest("192.168.1.1", "0.0.0.0"), owned, OUR_MAC));
    const ethernet = decodeEthernet(reply);
    if (!ethernet.ok) throw new Error(ethernet.detail);
    expect(ethernet.value.destination).toBe(PEER_MAC);
    expect(decodeArp(ethernet.value.payload)).toMatchObject({
      ok: true,
      value: { operation: "reply", senderIp: "192.168.1.1", senderMac: OUR_MAC, targetIp: "0.0.0.0" },
    });
  });

  it("accepts the interface MAC in any case", () => {
    expect(
      replyFrame(respond(arpRequest("192.168.1.1"), owned, "02:00:00:00:00:01".toUpperCase())),
    ).toHaveLength(42);
  });

  it.each([
    ["NotOwned", arpRequest("192.168.1.2")],
    [
      "NotASolicitation",
      arpReplyFrame({
        senderMac: PEER_MAC,
        senderIp: "192.168.1.1",
        targetMac: OUR_MAC,
        targetIp: "192.168.1.100",
      }),
    ],
    ["Announcement", gratuitousArpFrame("192.168.1.1", PEER_MAC)],
    ["OwnFrame", arpRequestFrame({ senderMac: OUR_MAC, senderIp: "192.168.1.1", targetIp: "192.168.1.1" })],
    [
      "NotArpOrNdp",
      encodeEthernet({
        destination: OUR_MAC,
        source: PEER_MAC,
        etherType: 0x0800,
        payload: Buffer.alloc(20),
      }),
    ],
  ] as const)("ignores it: %s", (reason, frame) => {
    expect(respond(frame, owned, OUR_MAC)).toEqual({ action: "ignore", reason });
  });

  it("drops malformed ARP and broken frames with the reason", () => {
    const broken = Buffer.from(arpRequest("192.168.1.1"));
    broken[14 + 5] = 16; // protocol address length
    expect(respond(broken, owned, OUR_MAC)).toMatchObject({ action: "drop", reason: "BadProtocolLength" });
    expect(respond(Buffer.alloc(5), owned, OUR_MAC)).toMatchObject({ action: "drop", reason: "Truncated" });
  });
});

describe("respond to Neighbor Solicitations", () => {
  it("answers with the byte-exact solicited advertisement, unicast to the asker", () => {
    const response = respond(solicitation("fd00::10"), owned, OUR_MAC);
    expect(response).toMatchObject({ action: "reply", protocol: "ndp", address: "fd00::10" });
    expect(replyFrame(response)).toEqual(
      hex(`
        00 11 22 33 44 55   02 00 00 00 00 01   86 dd
        60 00 00 00   00 20   3a   ff
        fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
        fe 80 00 00 00 00 00 00 02 11 22 ff fe 33 44 55
        88 00 b3 66   60 00 00 00
        fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
        02 01 02 00 00 00 00 01
      `),
    );
  });

  it("replies to the frame's source MAC when the solicitation has no link-layer option", () => {
    const { ethernet, ndp } = ndpReply(respond(solicitation("fd00::10", { slla: false }), owned, OUR_MAC));
    expect(ethernet.destination).toBe(PEER_MAC);
    expect(ndp).toMatchObject({ kind: "NeighborAdvertisement", solicited: true, override: true });
  });

  it("defends against DAD with a multicast advertisement to all nodes, Solicited clear", () => {
    const { ethernet, ipv6, ndp } = ndpReply(
      respond(solicitation("fd00::10", { source: "::" }), owned, OUR_MAC),
    );
    expect(ethernet.destination).toBe("33:33:00:00:00:01");
    expect(ipv6).toMatchObject({ destination: "ff02::1", source: "fd00::10", hopLimit: 255 });
    expect(ndp).toMatchObject({
      solicited: false,
      override: true,
      target: "fd00::10",
      targetLinkLayerAddress: OUR_MAC,
    });
  });

  it("keeps the VLAN tags", () => {
    const tagged = ndpFrame(
      encodeNeighborSolicitation({ source: PEER_V6, target: "fd00::10", sourceLinkLayerAddress: PEER_MAC }),
      "ff02::1:ff00:10",
      undefined,
      PEER_MAC,
      vlan42,
    );
    expect(ndpReply(respond(tagged, owned, OUR_MAC)).ethernet.vlanTags).toEqual(vlan42);
  });

  it("drops a solicitation that did not arrive with hop limit 255", () => {
    expect(respond(solicitation("fd00::10", { hopLimit: 64 }), owned, OUR_MAC)).toMatchObject({
      action: "drop",
      reason: "BadHopLimit",
    });
  });

  it.each([
    ["NotOwned", solicitation("fd00::11")],
    [
      "NotASolicitation",
      ndpFrame(
        encodeNeighborAdvertisement({
          source: "fd00::10",
          destination: "ff02::1",
          target: "fd00::10",
          solicited: false,
          override: true,
        }),
        "ff02::1",
        undefined,
        PEER_MAC,
      ),
    ],
    [
      "NotNeighborDiscovery",
      ndpFrame(
        encodeIPv6({
          source: PEER_V6,
          destination: "fd00::10",
          nextHeader: 6,
          hopLimit: 64,
          payload: Buffer.alloc(20),
        }),
        "fd00::10",
        OUR_MAC,
        PEER_MAC,
      ),
    ],
    [
      "NotNeighborDiscovery",
      ndpFrame(
        encodeIPv6({
          source: PEER_V6,
          destination: "fd00::10",
          nextHeader: 58,
          hopLimit: 64,
          payload: hex("80000000 00010001"),
        }),
        "fd00::10",
        OUR_MAC,
        PEER_MAC,
      ),
    ],
  ] as const)("ignores it: %s", (reason, frame) => {
    expect(respond(frame, owned, OUR_MAC)).toEqual({ action: "ignore", reason });
  });

  it("drops IPv6 packets whose header is broken", () => {
    const frame = Buffer.from(solicitation("fd00::10"));
    frame.writeUInt16BE(999, 14 + 4); // payload length beyond the frame
    expect(respond(frame, owned, OUR_MAC)).toMatchObject({ action: "drop", reason: "BadPayloadLength" });
  });
});
