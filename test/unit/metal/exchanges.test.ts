import { describe, expect, test } from "vitest";
import {
  exchangeFigures,
  handoverSeen,
  pairExchanges,
  parseTcpdumpArp,
  type ArpFrame,
  type Exchange,
} from "../../integration/metal/exchanges.ts";

const CLIENT = "02:00:00:00:00:01";
const OLD = "02:00:00:00:00:0a";
const NEW = "02:00:00:00:00:0b";
const ADDRESS = "192.0.2.200";

const request = (at: number): ArpFrame => ({
  at,
  kind: "request",
  src: CLIENT,
  dst: "ff:ff:ff:ff:ff:ff",
  address: ADDRESS,
});
const reply = (at: number, mac: string, dst = CLIENT): ArpFrame => ({
  at,
  kind: "reply",
  src: mac,
  dst,
  address: ADDRESS,
});

/** Requests every 10 ms from 0; `who[i]` answers request i 0.5 ms later (several MACs: several answers). */
function exchangesOf(who: readonly (readonly string[])[]): Exchange[] {
  const frames = who.flatMap((macs, i) => [request(i * 10), ...macs.map((m) => reply(i * 10 + 0.5, m))]);
  return pairExchanges(frames, CLIENT, ADDRESS);
}

describe("parseTcpdumpArp", () => {
  test("requests and replies, with tcpdump's kernel timestamp in ms", () => {
    expect(
      parseTcpdumpArp(
        `1764028800.123456 ${CLIENT} > ff:ff:ff:ff:ff:ff, ethertype ARP (0x0806), length 42: Request who-has ${ADDRESS} tell 192.0.2.100, length 28`,
      ),
    ).toEqual({
      at: 1764028800123.456,
      kind: "request",
      src: CLIENT,
      dst: "ff:ff:ff:ff:ff:ff",
      address: ADDRESS,
    });
    expect(
      parseTcpdumpArp(
        `1764028800.124000 ${OLD} > ${CLIENT}, ethertype ARP (0x0806), length 42: Reply ${ADDRESS} is-at ${OLD}, length 28`,
      ),
    ).toMatchObject({ kind: "reply", src: OLD, dst: CLIENT, address: ADDRESS });
  });

  test("anything else is undefined", () => {
    expect(parseTcpdumpArp("listening on eth0, link-type EN10MB")).toBeUndefined();
    expect(parseTcpdumpArp("")).toBeUndefined();
  });
});

describe("pairExchanges", () => {
  test("answers go to the request before them; other addresses, other clients and broadcasts are left out", () => {
    const frames = [
      reply(25, NEW),
      request(20),
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
