import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  addressMessages,
  decodeMessage,
  encodeMessage,
  factMessages,
  MAX_DATAGRAM,
  type Fact,
  type Message,
} from "./messages.ts";

describe("membership messages", () => {
  const messages: Message[] = [
    { type: "ping", from: "node-a", incarnation: 1700000000000, digest: "abc" },
    { type: "ack", from: "node-a", incarnation: 5, digest: "" },
    { type: "join", from: "worker-1.example", incarnation: 0 },
    {
      type: "facts",
      from: "node-b",
      facts: [{ node: "node-a", incarnation: 3, status: "dead" }],
      digest: "d",
      ask: true,
    },
    { type: "facts", from: "node-b", facts: [] },
    { type: "handover", from: "node-a", addresses: ["192.0.2.1", "2001:db8::1"] },
    { type: "handover", from: "node-a", addresses: ["192.0.2.1"], macs: ["02:00:00:00:00:0a"] },
    { type: "answering", from: "node-b", addresses: [] },
  ];

  test("round-trip, with and without a shared secret", () => {
    const secret = randomBytes(32);
    for (const message of messages) {
      expect(decodeMessage(encodeMessage(message))).toEqual(message);
      expect(decodeMessage(encodeMessage(message, secret), secret)).toEqual(message);
    }
  });

  test("with a secret, datagrams without the right tag are dropped", () => {
    const secret = randomBytes(32);
    const ping = messages[0]!;
    expect(decodeMessage(encodeMessage(ping), secret)).toBeUndefined();
    expect(decodeMessage(encodeMessage(ping, randomBytes(32)), secret)).toBeUndefined();
    const tampered = encodeMessage(ping, secret);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 3) ^ 1, tampered.length - 3);
    expect(decodeMessage(tampered, secret)).toBeUndefined();
    expect(decodeMessage(Buffer.alloc(4), secret)).toBeUndefined();
  });

  test("anything malformed is undefined, never an exception", () => {
    const bad = [
      "",
      "null",
      "[]",
      '"ping"',
      "{",
      '{"type":"ping","from":"a","incarnation":1}',
      '{"type":"ping","from":"A_B","incarnation":1,"digest":"x"}',
      '{"type":"ping","from":"a","incarnation":-1,"digest":"x"}',
      '{"type":"ping","from":"a","incarnation":1.5,"digest":"x"}',
      '{"type":"ack","from":"a","incarnation":1,"digest":7}',
      '{"type":"facts","from":"a","facts":[{"node":"b","incarnation":1,"status":"zombie"}]}',
      '{"type":"facts","from":"a","facts":{}}',
      '{"type":"gossip","from":"a"}',
      '{"type":"handover","from":"a"}',
      '{"type":"handover","from":"a","addresses":"192.0.2.1"}',
      '{"type":"answering","from":"a","addresses":[1]}',
      '{"type":"handover","from":"a","addresses":[],"macs":["02:00:00:00:00"]}',
      '{"type":"handover","from":"a","addresses":[],"macs":"02:00:00:00:00:0a"}',
      '{"type":"answering","from":"a","addresses":[""]}',
      `{"type":"answering","from":"a","addresses":["${"1".repeat(46)}"]}`,
      `{"type":"ping","from":"${"a".repeat(300)}","incarnation":1,"digest":"x"}`,
    ];
    for (const text of bad) expect(decodeMessage(Buffer.from(text)), text).toBeUndefined();
    expect(decodeMessage(Buffer.alloc(MAX_DATAGRAM + 1, 0x20))).toBeUndefined();
    for (let i = 0; i < 2000; i++) expect(() => decodeMessage(randomBytes(i % 200))).not.toThrow();
  });

  test("a large view is split into datagrams that each fit, losing nothing", () => {
    const facts: Fact[] = Array.from({ length: 1000 }, (_, i) => ({
      node: `ip-10-0-${i % 250}-${i}.ec2.internal`,
      incarnation: 1700000000000 + i,
      status: i % 3 === 0 ? "dead" : "alive",
    }));
    const datagrams = factMessages("self", facts, { digest: "digest", ask: true });
    expect(datagrams.length).toBeGreaterThan(1);
    const decoded = datagrams.map((d) => {
      expect(d.length).toBeLessThanOrEqual(MAX_DATAGRAM);
      const message = decodeMessage(d);
      expect(message).toMatchObject({ type: "facts", from: "self", digest: "digest", ask: true });
      return message?.type === "facts" ? message.facts : [];
    });
    expect(decoded.flat()).toEqual(facts);
  });

  test("many addresses handed over are split into datagrams that each fit, losing nothing", () => {
    const addresses = Array.from({ length: 1000 }, (_, i) => `2001:db8:0:${i.toString(16)}::${i}`);
    const datagrams = addressMessages("handover", "self", addresses);
    expect(datagrams.length).toBeGreaterThan(1);
    const decoded = datagrams.map((d) => {
      expect(d.length).toBeLessThanOrEqual(MAX_DATAGRAM);
      const message = decodeMessage(d);
      return message?.type === "handover" ? message.addresses : [];
    });
    expect(decoded.flat()).toEqual(addresses);
  });
});
