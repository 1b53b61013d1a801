// What a client on the LAN saw of one address, from the frames captured on its interface: its ARP requests,
// each paired with the replies that answered it, and the figures of a stretch of them — asked, answered,
// answered late (after the next request went out), answered by two nodes at once, the longest time without
// any answerer, reply latency. Each request carries its own sender IP (the client cycles through a set), and a
// reply goes to the sender IP of the request it answers, so a late reply is still paired with its request.
// Pure, so the arithmetic is unit-tested apart from the capture (arpRecorder.ts).

export interface ArpFrame {
  /** Kernel timestamp, ms since the epoch. */
  readonly at: number;
  readonly kind: "request" | "reply";
  /** Ethernet source and destination. */
  readonly src: string;
  readonly dst: string;
  /** The address asked for (request) or answered for (reply). */
  readonly address: string;
  /** The request's sender IP, which its reply is sent to: what pairs them. */
  readonly peer: string;
}

export interface Exchange {
  readonly sentAt: number;
  /** Every reply to this request, in arrival order. */
  readonly answers: readonly { readonly mac: string; readonly at: number }[];
}

/** An ARP request or reply's fields; undefined for anything else. */
export function decodeArpFrame(at: number, frame: Uint8Array): ArpFrame | undefined {
  if (frame.length < 42 || frame[12] !== 0x08 || frame[13] !== 0x06) return undefined;
  const op = (frame[20]! << 8) | frame[21]!;
  if (op !== 1 && op !== 2) return undefined;
  const mac = (from: number) =>
    [...frame.subarray(from, from + 6)].map((b) => b.toString(16).padStart(2, "0")).join(":");
  const ip = (from: number) => [...frame.subarray(from, from + 4)].join(".");
  const [senderIp, targetIp] = [ip(28), ip(38)];
  return op === 1
    ? { at, kind: "request", src: mac(6), dst: mac(0), address: targetIp, peer: senderIp }
    : { at, kind: "reply", src: mac(6), dst: mac(0), address: senderIp, peer: targetIp };
}

/**
 * Reads `tcpdump -n -tt -xx` line by line: a line starting with a timestamp begins a frame (the kernel's
 * timestamp), the hex lines after it are its bytes; a frame is complete when the next one begins (or at flush).
 */
export class TcpdumpHexReader {
  private at: number | undefined;
  private bytes: number[] = [];
  private readonly emit: (frame: ArpFrame) => void;

  constructor(emit: (frame: ArpFrame) => void) {
    this.emit = emit;
  }

  line(line: string): void {
    const header = /^(\d+\.\d+) /.exec(line);
    if (header) {
      this.flush();
      this.at = Number(header[1]) * 1000;
      return;
    }
    const hex = /^\s+0x[0-9a-f]+:\s+([0-9a-f ]+?)(?:\s{2,}.*)?$/.exec(line);
    if (!hex || this.at === undefined) return;
    for (const word of hex[1]!.trim().split(/\s+/))
      for (let i = 0; i + 1 < word.length; i += 2) this.bytes.push(parseInt(word.slice(i, i + 2), 16));
  }

  flush(): void {
    if (this.at !== undefined) {
      const frame = decodeArpFrame(this.at, Uint8Array.from(this.bytes));
      if (frame) this.emit(frame);
    }
    this.at = undefined;
    this.bytes = [];
  }
}

/**
 * The client's requests for `address` (sent from `clientMac`), each with the replies sent to the client for
 * it: a reply answers the latest request before it from the same sender IP. Gratuitous announcements (to
 * broadcast) are not answers and are left out.
 */
export function pairExchanges(frames: readonly ArpFrame[], clientMac: string, address: string): Exchange[] {
  const exchanges: { sentAt: number; answers: { mac: string; at: number }[] }[] = [];
  const latest = new Map<string, (typeof exchanges)[number]>();
  for (const frame of [...frames].sort((a, b) => a.at - b.at)) {
    if (frame.address !== address) continue;
    if (frame.kind === "request" && frame.src === clientMac) {
      const exchange = { sentAt: frame.at, answers: [] };
      exchanges.push(exchange);
      latest.set(frame.peer, exchange);
    } else if (frame.kind === "reply" && frame.dst === clientMac) {
      latest.get(frame.peer)?.answers.push({ mac: frame.src, at: frame.at });
    }
  }
  return exchanges;
}

export interface ExchangeFigures {
  readonly asked: number;
  readonly answered: number;
  /** Answered, but only after the next request went out (what a requester asking at that rate sees as lost). */
  readonly late: number;
  /** Requests answered by two or more nodes. */
  readonly doubleAnswered: number;
  /**
   * The longest time nobody answered: from the first request of a run of unanswered ones to the first answer
   * after it (to the last request when none came); 0 when every request was answered.
   */
  readonly longestSilenceMs: number;
  /** Request to first reply, per answered request. */
  readonly latenciesMs: readonly number[];
}

export function exchangeFigures(exchanges: readonly Exchange[]): ExchangeFigures {
  let answered = 0;
  let late = 0;
  let doubleAnswered = 0;
  let longestSilenceMs = 0;
  let silentSince: number | undefined;
  const latenciesMs: number[] = [];
  for (const [i, exchange] of exchanges.entries()) {
    const first = exchange.answers[0];
    if (!first) {
      silentSince ??= exchange.sentAt;
      continue;
    }
    answered++;
    const next = exchanges[i + 1];
    if (next && first.at > next.sentAt) late++;
    latenciesMs.push(first.at - exchange.sentAt);
    if (new Set(exchange.answers.map((a) => a.mac)).size > 1) doubleAnswered++;
    if (silentSince !== undefined) longestSilenceMs = Math.max(longestSilenceMs, first.at - silentSince);
    silentSince = undefined;
  }
  const last = exchanges.at(-1);
  if (silentSince !== undefined && last)
    longestSilenceMs = Math.max(longestSilenceMs, last.sentAt - silentSince);
  return { asked: exchanges.length, answered, late, doubleAnswered, longestSilenceMs, latenciesMs };
}

/**
 * The hand-over of an address from `from` to `to` as the client saw it: the last answer from `from` before
 * `to` answered alone, the first answer from `to`, and how many requests in between nobody answered (with
 * make-before-break: none).
 */
export function handoverSeen(exchanges: readonly Exchange[], from: string, to: string) {
  const byTo = exchanges.findIndex((e) => e.answers.some((a) => a.mac === to));
  if (byTo < 0) return undefined;
  let lastFrom = -1;
  for (let i = 0; i < exchanges.length; i++) {
    if (exchanges[i]!.answers.some((a) => a.mac === from)) lastFrom = i;
    else if (i > byTo) break;
  }
  const [lo, hi] = lastFrom < byTo ? [lastFrom + 1, byTo] : [byTo, lastFrom];
  const unansweredBetween = exchanges.slice(lo, hi).filter((e) => e.answers.length === 0).length;
  return { firstByTo: byTo, lastByFrom: lastFrom, unansweredBetween };
}
