// No false failover under load: with every core kept busy by other processes, the speakers must tell a slow
// speaker from a dead one. Nothing may move and nobody may be declared dead while all of them are merely
// starved; a speaker really killed meanwhile must still be failed over, to the node the election picks.
// PORTICO_SATURATION_SECONDS sets how long the CPUs stay saturated before the kill (default 45), and
// PORTICO_SATURATION_HOGS how many busy-loop processes saturate them (default four per core).
// How long a process waits for a core on a saturated machine depends on everything else it runs, so a second
// test makes the worst case happen on purpose: a speaker stopped outright (SIGSTOP) for longer than the
// membership timeout, as a starved one is, and then for longer than the membership's stall cap, as a hung one is.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, onTestFinished } from "vitest";
import { expect, test, waitFor } from "../../harness/index.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { freePort } from "../../harness/ports.ts";
import { probePresence } from "../../../speaker/membership/presence.ts";
import { measureSaturation, speakerEvents } from "./saturation.ts";
import { buildAddon, E2E_TIMEOUT_MS, MetalCluster, type MetalNode } from "./speakers.ts";

const SECONDS = Number(process.env.PORTICO_SATURATION_SECONDS ?? 45);
const HOGS = process.env.PORTICO_SATURATION_HOGS ? Number(process.env.PORTICO_SATURATION_HOGS) : undefined;
/** One address per speaker, most likely spread over more than one of them by the election. */
const ADDRESSES = ["192.0.2.140", "192.0.2.141", "192.0.2.142"];
/** Four times the membership timeout (500 ms), well under its stall cap (ten timeouts). */
const STALL_MS = 2_000;
/** Past the stall cap. */
const HANG_MS = 7_000;
const STALL_CAP_MS = 5_000;

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

/** Three speakers, each address announced by its elected node alone. */
async function announced(cluster: Parameters<typeof MetalCluster.create>[0]): Promise<MetalCluster> {
  const metal = await MetalCluster.create(cluster, {
    nodes: 3,
    addresses: ADDRESSES,
    onCleanup: onTestFinished,
  });
  await metal.startSpeakers();
  for (const [i, address] of ADDRESSES.entries()) await metal.createService(`web${i}`, [address]);
  await waitFor("each address to be announced by its elected node alone", () =>
    ADDRESSES.every((a) => {
      const announcers = metal.announcersOf(a);
      return announcers.length === 1 && announcers[0] === metal.electedFor(a);
    }),
  );
  return metal;
}

/** SIGSTOP, then SIGCONT after `ms` (or when the test ends): the process gets no CPU at all meanwhile. */
async function freeze(node: MetalNode, ms: number, meanwhile: () => Promise<void> = () => sleep(ms)) {
  // `ip netns exec` and setpriv exec the speaker, so the pid spawned is node itself.
  const pid = node.process!.pid!;
  const thaw = () => process.kill(pid, "SIGCONT");
  onTestFinished(() => {
    if (node.process?.running) thaw();
  });
  process.kill(pid, "SIGSTOP");
  const stoppedAt = Date.now();
  try {
    await meanwhile();
    await sleep(Math.max(0, stoppedAt + ms - Date.now()));
  } finally {
    thaw();
  }
}

test("a presence probe is answered by the kernel: a stopped process is there, a gone one is not", async () => {
  const port = await freePort();
  const listener = spawn(process.execPath, [
    "-e",
    `require("node:net").createServer((s) => s.destroy()).listen(${port}, "127.0.0.1", () => console.log("up"))`,
  ]);
  onTestFinished(() => {
    listener.kill("SIGKILL");
  });
  await once(listener.stdout, "data");
  expect(await probePresence("127.0.0.1", port, 1_000)).toBe("process");
  // Stopped, as a process that gets no CPU: its kernel still completes the connection.
  listener.kill("SIGSTOP");
  expect(await probePresence("127.0.0.1", port, 1_000)).toBe("process");
  listener.kill("SIGKILL");
  await once(listener, "exit");
  expect(await probePresence("127.0.0.1", port, 1_000)).toBe("no-process");
});

test(
  "with every core saturated by other work, no address moves and no speaker is declared dead; a killed one is still replaced",
  async ({ cluster }) => {
    const metal = await announced(cluster);
    const figures = await measureSaturation(metal, {
      seconds: SECONDS,
      address: ADDRESSES[0]!,
      kill: true,
      ...(HOGS ? { hogs: HOGS } : {}),
    });
    console.log(`CPU saturation: ${JSON.stringify(figures)}`);
    expect(figures.machineBusy).toMatch(/^(9\d|100)% /);
    expect(figures.moves).toEqual([]);
    expect(figures.declaredDead).toEqual([]);
    expect(figures.refuted).toEqual([]);

    const failover = figures.failover!;
    expect(failover.to).toBe(failover.expected);
    expect(failover.arpAnswers.length).toBeGreaterThan(0);
    expect(new Set(failover.arpAnswers)).toEqual(new Set([metal.node(failover.to).mac]));
  },
  E2E_TIMEOUT_MS + SECONDS * 1000,
);

test(
  "a speaker that gets no CPU for four membership timeouts keeps its addresses; one that hangs past the stall cap is failed over",
  async ({ cluster }) => {
    const metal = await announced(cluster);
    const address = ADDRESSES[0]!;
    const frozen = metal.electedFor(address);
    const others = metal.nodes.filter((n) => n !== frozen);

    const start = Date.now();
    await freeze(frozen, STALL_MS);
    // Time for any verdict, refutation and hand-back to have happened and been logged.
    await sleep(1_500);
    expect(await speakerEvents(metal.nodes, start, Date.now())).toEqual({
      moves: [],
      declaredDead: [],
      refuted: [],
    });
    expect(metal.announcersOf(address)).toEqual([frozen]);

    const successor = metal.electedFor(address, others);
    const hungAt = Date.now();
    let failedOverAfterMs = NaN;
    await freeze(frozen, HANG_MS, async () => {
      await waitFor(
        `${successor.name} to take ${address} over from the hung speaker`,
        () => successor.owned.includes(address),
        { timeoutMs: HANG_MS - 500, intervalMs: 20 },
      );
      failedOverAfterMs = Date.now() - hungAt;
    });
    console.log(`a speaker hung for ${HANG_MS} ms was failed over after ${failedOverAfterMs} ms`);
    // Silence counts from the last datagram heard, up to a round (100 ms) before the stop.
    expect(failedOverAfterMs).toBeGreaterThan(STALL_CAP_MS - 200);
    const events = await speakerEvents(others, hungAt, Date.now());
    expect(events.declaredDead.length).toBeGreaterThan(0);
    // Thawed, it refutes its death, and one node alone announces the address: the successor, whose record
    // names it, or the thawed speaker when it wrote its own record again before it read the successor's.
    await waitFor("the thawed speaker to be alive again for every speaker", () =>
      others.every((n) => n.live.includes(frozen.name)),
    );
    await waitFor("one node alone to announce the address", () => {
      const announcers = metal.announcersOf(address);
      return announcers.length === 1 && [frozen, successor].includes(announcers[0]!);
    });
  },
  E2E_TIMEOUT_MS,
);
