import { describe, expect, test } from "vitest";
import { arpReplyFrame, arpRequestFrame } from "../../../speaker/packets/arp.ts";
import {
  decodeArpFrame,
  exchangeFigures,
  handoverSeen,
  pairExchanges,
  TcpdumpHexReader,
  type ArpFrame,
  type Exchange,
} from "../../integration/metal/exchanges.ts";

const CLIENT = "02:00:00:00:00:01";
const OLD = "02:00:00:00:00:0a";
const NEW = "02:00:00:00:00:0b";
const ADDRESS = "192.0.2.200";
const PEER = "198.51.100.1";

const request = (at: number, peer = PEER): ArpFrame => ({
  at,
  kind: "request",
  src: CLIENT,
  dst: "ff:ff:ff:ff:ff:ff",
  address: ADDRESS,
  peer,
});
const reply = (at: number, mac: string, dst = CLIENT, peer = PEER): ArpFrame => ({
  at,
  kind: "reply",
  src: mac,
  dst,
  address: ADDRESS,
  peer,
});

/**
 * Requests every 10 ms from 0, each from its own sender IP; `who[i]` answers request i 0.5 ms later (several
 * MACs: several answers).
 */
function exchangesOf(who: readonly (readonly string[])[]): Exchange[] {
  const frames = who.flatMap((macs, i) => {
    const peer = `198.51.100.${i + 1}`;
    return [request(i * 10, peer), ...macs.map((m) => reply(i * 10 + 0.5, m, CLIENT, peer))];
  });
  return pairExchanges(frames, CLIENT, ADDRESS);
}

describe("decodeArpFrame and TcpdumpHexReader", () => {
  const asked = arpRequestFrame({ senderMac: CLIENT, senderIp: "198.51.100.7", targetIp: ADDRESS });
  const answer = arpReplyFrame({
    senderMac: OLD,
    senderIp: ADDRESS,
    targetMac: CLIENT,
    targetIp: "198.51.100.7",
  });

  test("a request's address is its target, a reply's its sender; the peer pairs them", () => {
    expect(decodeArpFrame(1, asked)).toEqual({ ...request(1, "198.51.100.7") });
    expect(decodeArpFrame(2, answer)).toEqual({ ...reply(2, OLD, CLIENT, "198.51.100.7") });
    expect(decodeArpFrame(3, asked.subarray(0, 30))).toBeUndefined();
  });

  test("tcpdump -tt -xx: a timestamped line, then the frame in hex, complete when the next begins", () => {
    const hexLines = (frame: Buffer) =>
      (frame.toString("hex").match(/.{1,32}/g) ?? []).map(
        (row, i) =>
          `\t0x${(i * 16).toString(16).padStart(4, "0")}:  ${(row.match(/.{1,4}/g) ?? []).join(" ")}`,
      );
    const frames: ArpFrame[] = [];
    const reader = new TcpdumpHexReader((f) => frames.push(f));
    reader.line("1764028800.123456 ARP, Request who-has 192.0.2.200 tell 198.51.100.7, length 28");
    hexLines(asked).forEach((l) => reader.line(l));
    expect(frames).toEqual([]);
    reader.line("1764028800.124000 ARP, Reply 192.0.2.200 is-at 02:00:00:00:00:0a, length 28");
    hexLines(answer).forEach((l) => reader.line(l));
    reader.line("tcpdump: 2 packets captured");
    reader.flush();
    expect(frames.map((f) => [f.at, f.kind, f.peer])).toEqual([
      [1764028800123.456, "request", "198.51.100.7"],
      [1764028800124, "reply", "198.51.100.7"],
    ]);
  });
});

describe("pairExchanges", () => {
  test("answers go to the latest request from their peer; other addresses, clients and broadcasts are left out", () => {
    const frames = [
      reply(25, NEW, CLIENT, "198.51.100.2"),
      request(20, "198.51.100.2"),
      { ...request(10), src: OLD },
      request(0),
      reply(1, OLD),
      reply(2, NEW, "ff:ff:ff:ff:ff:ff"),
      { ...reply(3, NEW), address: "192.0.2.201" },
      reply(12, NEW),
    ];
    expect(pairExchanges(frames, CLIENT, ADDRESS)).toEqual([
      {
        sentAt: 0,
        answers: [
          { mac: OLD, at: 1 },
          { mac: NEW, at: 12 },
        ],
      },
      { sentAt: 20, answers: [{ mac: NEW, at: 25 }] },
    ]);
  });

  test("a late answer stays with its own request, not the one sent meanwhile", () => {
    const frames = [
      request(0, "198.51.100.1"),
      request(10, "198.51.100.2"),
      reply(14, OLD, CLIENT, "198.51.100.2"),
      reply(35, OLD, CLIENT, "198.51.100.1"),
    ];
    const exchanges = pairExchanges(frames, CLIENT, ADDRESS);
    expect(exchanges.map((e) => e.answers.map((a) => a.at))).toEqual([[35], [14]]);
    expect(exchangeFigures(exchanges)).toMatchObject({ answered: 2, late: 1, longestSilenceMs: 0 });
  });

  test("a reply before any request is nobody's answer", () => {
    expect(pairExchanges([reply(1, OLD)], CLIENT, ADDRESS)).toEqual([]);
  });
});

describe("exchangeFigures", () => {
  test("every request answered by one node: no silence, no double answer", () => {
    const figures = exchangeFigures(exchangesOf([[OLD], [OLD], [NEW], [NEW]]));
    expect(figures).toEqual({
      asked: 4,
      answered: 4,
      late: 0,
      doubleAnswered: 0,
      longestSilenceMs: 0,
      latenciesMs: [0.5, 0.5, 0.5, 0.5],
    });
  });

  test("a break before the make: silence from the first unanswered request to the next answer", () => {
    const figures = exchangeFigures(exchangesOf([[OLD], [], [], [NEW], [], [NEW]]));
    expect(figures.answered).toBe(3);
    expect(figures.longestSilenceMs).toBe(30.5 - 10);
  });

  test("an overlap: requests answered by both count as double answers", () => {
    const figures = exchangeFigures(exchangesOf([[OLD], [OLD, NEW], [NEW, OLD], [NEW]]));
    expect(figures.doubleAnswered).toBe(2);
    expect(figures.longestSilenceMs).toBe(0);
  });

  test("silence to the end counts up to the last request; nothing asked, nothing to say", () => {
    expect(exchangeFigures(exchangesOf([[OLD], [], []])).longestSilenceMs).toBe(10);
    expect(exchangeFigures([])).toEqual({
      asked: 0,
      answered: 0,
      late: 0,
      doubleAnswered: 0,
      longestSilenceMs: 0,
      latenciesMs: [],
    });
  });
});

describe("handoverSeen", () => {
  test("make-before-break: nothing unanswered between the two", () => {
    expect(handoverSeen(exchangesOf([[OLD], [OLD, NEW], [NEW]]), OLD, NEW)).toEqual({
      firstByTo: 1,
      lastByFrom: 1,
      unansweredBetween: 0,
    });
  });

  test("break-before-make: the requests nobody answered in between", () => {
    expect(handoverSeen(exchangesOf([[OLD], [], [], [NEW], []]), OLD, NEW)).toEqual({
      firstByTo: 3,
      lastByFrom: 0,
      unansweredBetween: 2,
    });
  });

  test("undefined until the new node answered", () => {
    expect(handoverSeen(exchangesOf([[OLD], []]), OLD, NEW)).toBeUndefined();
  });
});
