// What a client on the LAN saw of one address, from the frames captured on its interface (kernel timestamps):
// its ARP requests, each paired with the replies that answered it, and the figures of a stretch of them —
// asked, answered, answered by two nodes at once, the longest time without any answerer, reply latency.
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
}

export interface Exchange {
  readonly sentAt: number;
  /** Every reply to the client for the address before the next request, in arrival order. */
  readonly answers: readonly { readonly mac: string; readonly at: number }[];
}

const TCPDUMP_ARP =
  /^(\d+\.\d+) ([0-9a-f:]{17}) > ([0-9a-f:]{17}), ethertype ARP \(0x0806\), length \d+: (?:Request who-has (\S+)(?: \([^)]*\))? tell \S+|Reply (\S+) is-at [0-9a-f:]{17})/;

/** One line of `tcpdump -tt -e -n arp`, or undefined for anything else. */
export function parseTcpdumpArp(line: string): ArpFrame | undefined {
  const m = TCPDUMP_ARP.exec(line);
  if (!m) return undefined;
  const [, seconds, src, dst, asked, answered] = m;
  return {
    at: Number(seconds) * 1000,
    kind: asked !== undefined ? "request" : "reply",
    src: src!,
    dst: dst!,
    address: (asked ?? answered)!,
  };
}

/**
 * The client's requests for `address` (sent from `clientMac`), each with the replies sent to the client for
 * it until the next request. Gratuitous announcements (to broadcast) are not answers and are left out.
 */
export function pairExchanges(frames: readonly ArpFrame[], clientMac: string, address: string): Exchange[] {
  const exchanges: { sentAt: number; answers: { mac: string; at: number }[] }[] = [];
  for (const frame of [...frames].sort((a, b) => a.at - b.at)) {
    if (frame.address !== address) continue;
    if (frame.kind === "request" && frame.src === clientMac)
      exchanges.push({ sentAt: frame.at, answers: [] });
    else if (frame.kind === "reply" && frame.dst === clientMac)
      exchanges.at(-1)?.answers.push({ mac: frame.src, at: frame.at });
  }
  return exchanges;
}

export interface ExchangeFigures {
  readonly asked: number;
  readonly answered: number;
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
  let doubleAnswered = 0;
  let longestSilenceMs = 0;
  let silentSince: number | undefined;
  const latenciesMs: number[] = [];
  for (const exchange of exchanges) {
    const first = exchange.answers[0];
    if (!first) {
      silentSince ??= exchange.sentAt;
      continue;
    }
    answered++;
    latenciesMs.push(first.at - exchange.sentAt);
    if (new Set(exchange.answers.map((a) => a.mac)).size > 1) doubleAnswered++;
    if (silentSince !== undefined) longestSilenceMs = Math.max(longestSilenceMs, first.at - silentSince);
    silentSince = undefined;
  }
  const last = exchanges.at(-1);
  if (silentSince !== undefined && last)
    longestSilenceMs = Math.max(longestSilenceMs, last.sentAt - silentSince);
  return { asked: exchanges.length, answered, doubleAnswered, longestSilenceMs, latenciesMs };
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
