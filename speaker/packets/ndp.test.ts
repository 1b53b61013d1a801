import { describe, expect, it } from "vitest";
import { unsolicitedNeighborAdvertisementFrame, takeoverFrames } from "./announce.ts";
import { decodeEthernet } from "./ethernet.ts";
import { decodeIPv6, encodeIPv6, ipv6Bytes, pseudoHeaderChecksum } from "./ipv6.ts";
import {
  decodeNdp,
  encodeNeighborAdvertisement,
  encodeNeighborSolicitation,
  isSolicitedNodeMulticast,
  solicitedNodeMulticast,
} from "./ndp.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ""), "hex");

const PEER = "fe80::211:22ff:fe33:4455"; // EUI-64 of 00:11:22:33:44:55
const TARGET = "fd00::10";

// Neighbor Solicitation for fd00::10 from fe80::211:22ff:fe33:4455 (RFC 4861 §4.3), as a frame.
// Checksum computed independently over the pseudo-header (RFC 8200 §8.1).
const NS_FRAME = hex(`
  33 33 ff 00 00 10   00 11 22 33 44 55   86 dd
  60 00 00 00   00 20   3a   ff
  fe 80 00 00 00 00 00 00 02 11 22 ff fe 33 44 55
  ff 02 00 00 00 00 00 00 00 00 00 01 ff 00 00 10
  87 00 af ca   00 00 00 00
  fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
  01 01 00 11 22 33 44 55
`);

// The solicited Neighbor Advertisement answering it (RFC 4861 §4.4): S and O set, target link-layer option.
const NA_PACKET = hex(`
  60 00 00 00   00 20   3a   ff
  fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
  fe 80 00 00 00 00 00 00 02 11 22 ff fe 33 44 55
  88 00 b3 66   60 00 00 00
  fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
  02 01 02 00 00 00 00 01
`);

// A Duplicate Address Detection probe for fd00::10. Its checksum, by hand: the pseudo-header words
// ff02 0001 ff00 0010 (destination), 0018 (length), 003a (next header) plus the message words
// 8700 fd00 0010 sum to 0x38275; folding gives 0x8278, whose complement is 0x7d87.
const DAD_PACKET = hex(`
  60 00 00 00   00 18   3a   ff
  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
  ff 02 00 00 00 00 00 00 00 00 00 01 ff 00 00 10
  87 00 7d 87   00 00 00 00
  fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
`);

function ndpOf(packet: Uint8Array) {
  const ipv6 = decodeIPv6(packet);
  if (!ipv6.ok) throw new Error(ipv6.detail);
  return decodeNdp(ipv6.value);
}

describe("NDP byte-exact vectors", () => {
  it("decodes the known solicitation", () => {
    const ethernet = decodeEthernet(NS_FRAME);
    if (!ethernet.ok) throw new Error(ethernet.detail);
    expect(ndpOf(ethernet.value.payload)).toEqual({
      ok: true,
      value: {
        kind: "NeighborSolicitation",
        ipSource: PEER,
        ipDestination: "ff02::1:ff00:10",
        target: TARGET,
        isDad: false,
        sourceLinkLayerAddress: "00:11:22:33:44:55",
      },
    });
  });

  it("encodes the known solicitation and advertisement", () => {
    expect(
      encodeNeighborSolicitation({
        source: PEER,
        target: TARGET,
        sourceLinkLayerAddress: "00:11:22:33:44:55",
      }),
    ).toEqual(NS_FRAME.subarray(14));
    expect(
      encodeNeighborAdvertisement({
        source: TARGET,
        destination: PEER,
        target: TARGET,
        solicited: true,
        override: true,
        targetLinkLayerAddress: "02:00:00:00:00:01",
      }),
    ).toEqual(NA_PACKET);
  });

  it("encodes and decodes the known DAD probe", () => {
    expect(encodeNeighborSolicitation({ source: "::", target: TARGET })).toEqual(DAD_PACKET);
    expect(ndpOf(DAD_PACKET)).toMatchObject({ ok: true, value: { isDad: true, target: TARGET } });
  });

  it("encodes the unsolicited takeover advertisement to all nodes", () => {
    const frame = unsolicitedNeighborAdvertisementFrame(TARGET, "02:00:00:00:00:01");
    expect(frame).toEqual(
      hex(`
        33 33 00 00 00 01   02 00 00 00 00 01   86 dd
        60 00 00 00   00 20   3a   ff
        fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
        ff 02 00 00 00 00 00 00 00 00 00 00 00 00 00 01
        88 00 5a 7d   20 00 00 00
        fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10
        02 01 02 00 00 00 00 01
      `),
    );
    expect(takeoverFrames("FD00::10", "02:00:00:00:00:01")).toEqual([frame]);
  });
});

describe("NDP round trips and helpers", () => {
  it("decodes the advertisement it encodes", () => {
    expect(ndpOf(NA_PACKET)).toEqual({
      ok: true,
      value: {
        kind: "NeighborAdvertisement",
        ipSource: TARGET,
        ipDestination: PEER,
        router: false,
        solicited: true,
        override: true,
        target: TARGET,
        targetLinkLayerAddress: "02:00:00:00:00:01",
      },
    });
    const routerNoOption = encodeNeighborAdvertisement({
      source: "fd00::1",
      destination: "ff02::1",
      target: "fd00::1",
      router: true,
      solicited: false,
      override: false,
    });
    expect(ndpOf(routerNoOption)).toEqual({
      ok: true,
      value: {
        kind: "NeighborAdvertisement",
        ipSource: "fd00::1",
        ipDestination: "ff02::1",
        router: true,
        solicited: false,
        override: false,
        target: "fd00::1",
      },
    });
  });

  it("computes solicited-node multicast addresses", () => {
    expect(solicitedNodeMulticast("2001:db8::abcd:1234:5678")).toBe("ff02::1:ff34:5678");
    expect(isSolicitedNodeMulticast(ipv6Bytes("ff02::1:ff34:5678"))).toBe(true);
    expect(isSolicitedNodeMulticast(ipv6Bytes("ff02::1"))).toBe(false);
  });

  it("skips unknown options such as the nonce (RFC 3971) and ignores Ethernet padding", () => {
    const withNonce = buildNdp({ options: hex("0e01 010203040506") });
    expect(ndpOf(Buffer.concat([withNonce, Buffer.alloc(6)]))).toMatchObject({
      ok: true,
      value: { target: TARGET },
    });
  });
});

interface Build {
  type?: number;
  code?: number;
  flags?: number;
  source?: string;
  destination?: string;
  target?: string;
  options?: Uint8Array;
  hopLimit?: number;
  nextHeader?: number;
  truncateTo?: number;
}

/** An NS-like packet with any field wrong, and a correct checksum unless the test breaks it. */
function buildNdp(build: Build): Buffer {
  const source = build.source ?? PEER;
  const destination = build.destination ?? "ff02::1:ff00:10";
  const message = Buffer.concat([
    Buffer.from([build.type ?? 135, build.code ?? 0, 0, 0, build.flags ?? 0, 0, 0, 0]),
    ipv6Bytes(build.target ?? TARGET),
    build.options ?? hex("0101 001122334455"),
  ]).subarray(0, build.truncateTo);
  if (message.length >= 4) {
    message.writeUInt16BE(pseudoHeaderChecksum(ipv6Bytes(source), ipv6Bytes(destination), 58, message), 2);
  }
  return encodeIPv6({
    source,
    destination,
    nextHeader: build.nextHeader ?? 58,
    hopLimit: build.hopLimit ?? 255,
    payload: message,
  });
}

describe("malformed Neighbor Discovery", () => {
  const badChecksum = Buffer.from(NS_FRAME.subarray(14));
  badChecksum[40 + 23] = 0x11; // the target's last byte was 0x10

  it.each([
    ["UnsupportedNextHeader", buildNdp({ nextHeader: 17 })],
    ["Truncated", buildNdp({ truncateTo: 3 })],
    ["UnsupportedIcmpType", buildNdp({ type: 128 })],
    ["BadHopLimit", buildNdp({ hopLimit: 64 })],
    ["BadHopLimit", buildNdp({ hopLimit: 254 })],
    ["BadChecksum", badChecksum],
    ["BadIcmpCode", buildNdp({ code: 1 })],
    ["Truncated", buildNdp({ truncateTo: 20 })],
    ["MulticastTarget", buildNdp({ target: "ff02::1" })],
    ["ZeroLengthOption", buildNdp({ options: hex("0100 001122334455") })],
    ["TruncatedOption", buildNdp({ options: hex("0102 001122334455") })],
    ["TruncatedOption", buildNdp({ options: hex("0101 001122334455 01") })],
    ["BadLinkLayerOption", buildNdp({ options: hex("0102 001122334455 0000000000000000") })],
    ["BadDadSolicitation", buildNdp({ source: "::", options: new Uint8Array(0), destination: "ff02::1" })],
    ["BadDadSolicitation", buildNdp({ source: "::" })],
    ["SolicitedToMulticast", buildNdp({ type: 136, flags: 0x40, destination: "ff02::1" })],
  ] as const)("reports %s", (reason, packet) => {
    const decoded = ndpOf(packet);
    expect(decoded).toMatchObject({ ok: false, reason });
  });

  it.each([
    ["Truncated", Buffer.alloc(39)],
    ["NotIPv6", Buffer.concat([hex("45"), Buffer.alloc(39)])],
    ["BadPayloadLength", NA_PACKET.subarray(0, NA_PACKET.length - 1)],
  ] as const)("reports IPv6 header problem %s", (reason, packet) => {
    expect(decodeIPv6(packet)).toMatchObject({ ok: false, reason });
  });
});
