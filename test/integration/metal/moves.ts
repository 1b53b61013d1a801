// Figures of address moves as a client asking every 10 ms saw them (arpRecorder.ts), for the benchmark: each
// move is a window of the recording, from the act (a SIGKILL, a restart, a relabel) to when the new announcer
// alone answers, summarised per kind of move — the longest time nobody answered, the requests nobody answered
// at the switch itself, and the requests answered by two nodes.
import { mergePatch } from "../../harness/kube.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { waitFor } from "../../harness/wait.ts";
import type { ArpRecorder } from "./arpRecorder.ts";
import type { MetalCluster, MetalNode } from "./speakers.ts";
import { exchangeFigures, handoverSeen, type ExchangeFigures } from "./exchanges.ts";

interface MoveFigures extends ExchangeFigures {
  /** Requests nobody answered between the old announcer's last answer and the new one's first. */
  readonly unansweredAtSwitch: number;
}

/** After the new announcer alone answers, a little longer, so the tail of an overlap is inside the window. */
const SETTLE_MS = 200;

export class MoveLog {
  private readonly recorder: ArpRecorder;
  private readonly moves = new Map<string, MoveFigures[]>();

  constructor(recorder: ArpRecorder) {
    this.recorder = recorder;
  }

  /** Acts, waits until `to` (a MAC) alone answers the client, and files the window under `kind`. */
  async move(kind: string, from: string, to: string, act: () => Promise<void>): Promise<void> {
    const since = Date.now();
    await act();
    await this.endMove(kind, from, to, since);
  }

  /** Files a window that began at `since` and ends once `to` alone answers (the act is already done). */
  async endMove(kind: string, from: string, to: string, since: number): Promise<void> {
    await this.answeredBy(to, since);
    const exchanges = this.recorder.exchanges(since, Date.now());
    const figures = {
      ...exchangeFigures(exchanges),
      unansweredAtSwitch: handoverSeen(exchanges, from, to)?.unansweredBetween ?? NaN,
    };
    this.moves.set(kind, [...(this.moves.get(kind) ?? []), figures]);
  }

  /** Per kind: moves, the longest silence (p50, max) and double answers (total, most in one move). */
  summary(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [kind, figures] of this.moves) {
      const silences = figures.map((f) => f.longestSilenceMs);
      const doubles = figures.map((f) => f.doubleAnswered);
      out[kind] = {
        moves: figures.length,
        longestSilenceMs: {
          p50: +percentile(silences, 50).toFixed(1),
          max: +Math.max(...silences).toFixed(1),
          each: silences.map((s) => Math.round(s)).join(" "),
        },
        unansweredAtSwitch: figures.map((f) => f.unansweredAtSwitch).join(" "),
        doubleAnswered: { total: sum(doubles), maxInOneMove: Math.max(...doubles) },
        answeredOfAsked: `${sum(figures.map((f) => f.answered))}/${sum(figures.map((f) => f.asked))}`,
        answeredLate: sum(figures.map((f) => f.late)),
      };
    }
    return out;
  }

  private async answeredBy(mac: string, since: number): Promise<void> {
    await waitFor(
      `${mac} alone to answer the client`,
      () => {
        const last = this.recorder.exchanges(since).at(-1);
        return last !== undefined && last.answers.length > 0 && last.answers.every((a) => a.mac === mac);
      },
      { timeoutMs: 60_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }
}

const EXCLUDE = "node.kubernetes.io/exclude-from-external-load-balancers";

/**
 * Moves the address away from the announcing node and back `times` over by relabelling, as `kubectl label node`
 * would: the announcing node is labelled out of the election after the other is labelled back in (an address
 * stays with a node while it may announce it, so taking the label off alone moves nothing).
 */
export async function relabelMoves(
  metal: MetalCluster,
  elected: MetalNode,
  address: string,
  times: number,
  moves: MoveLog,
): Promise<void> {
  const successor = metal.electedFor(
    address,
    metal.nodes.filter((n) => n !== elected),
  );
  const label = (node: MetalNode, value: string | null) =>
    metal.cluster.core.patchNode(
      { name: node.name, body: { metadata: { labels: { [EXCLUDE]: value } } } },
      mergePatch,
    );
  const exclude = (from: MetalNode, to: MetalNode) => async () => {
    await label(to, null);
    await label(from, "true");
  };
  for (let i = 0; i < times; i++) {
    await moves.move("awayOnRelabel", elected.mac, successor.mac, exclude(elected, successor));
    await moves.move("backOnRelabel", successor.mac, elected.mac, exclude(successor, elected));
  }
  await label(successor, null);
}

/**
 * Puts `address` in a pool whose nodeSelectors admit only the announcing node, then edits them `times` over to
 * admit only the next node and back, as a user editing the IPAddressPool would; the labels and pool stay.
 */
export async function poolEditMoves(
  metal: MetalCluster,
  elected: MetalNode,
  address: string,
  times: number,
  moves: MoveLog,
): Promise<void> {
  const SIDE = "bench.portico.io/side";
  const successor = metal.electedFor(
    address,
    metal.nodes.filter((n) => n !== elected),
  );
  const { cluster } = metal;
  for (const [node, side] of [
    [elected, "a"],
    [successor, "b"],
  ] as const)
    await cluster.core.patchNode(
      { name: node.name, body: { metadata: { labels: { [SIDE]: side } } } },
      mergePatch,
    );
  // Installed before the speakers started, or they notice it only at their next look (every 30 s).
  await installPoolCrd(cluster);
  const spec = (side: string) => ({
    addresses: [`${address}/32`],
    nodeSelectors: [{ matchLabels: { [SIDE]: side } }],
  });
  const pool = await createPool(cluster, "edited", spec("a"));
  for (let i = 0; i < times; i++) {
    await moves.move("awayOnPoolEdit", elected.mac, successor.mac, () => pool.replace(spec("b")));
    await moves.move("backOnPoolEdit", successor.mac, elected.mac, () => pool.replace(spec("a")));
  }
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

function percentile(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
