// The speakers' membership protocol over real UDP, many members in one process, each on its own loopback
// address (127.x.y.z all belong to the loopback interface) and the same port, as on real nodes.
import { randomInt } from "node:crypto";
import { onTestFinished } from "vitest";
import { Memberlist, type MembershipEvent } from "../../../speaker/membership/memberlist.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { freePort } from "../../harness/ports.ts";

const INTERVAL_MS = 100;
const TIMEOUT_MS = 500;
const FANOUT = 2;

class Cluster {
  readonly members = new Map<string, Memberlist>();
  readonly events = new Map<string, MembershipEvent[]>();
  readonly peers = new Map<string, string>();
  readonly port: number;

  readonly restartHoldMs: number | undefined;

  constructor(size: number, port: number, restartHoldMs?: number) {
    this.port = port;
    this.restartHoldMs = restartHoldMs;
    const [a, b] = [randomInt(1, 255), randomInt(1, 255)];
    for (let i = 0; i < size; i++) this.peers.set(`node-${i}`, `127.${a}.${b}.${i + 1}`);
  }

  async start(name: string): Promise<Memberlist> {
    const events: MembershipEvent[] = [];
    this.events.set(name, events);
    const member = new Memberlist({
      self: name,
      port: this.port,
      bindAddress: this.peers.get(name)!,
      intervalMs: INTERVAL_MS,
      timeoutMs: TIMEOUT_MS,
      fanout: FANOUT,
      onEvent: (event) => events.push(event),
      ...(this.restartHoldMs ? { restartHoldMs: this.restartHoldMs } : {}),
    });
    member.setPeers(this.peers);
    await member.start();
    this.members.set(name, member);
    return member;
  }

  async startAll(): Promise<void> {
    await Promise.all([...this.peers.keys()].map((name) => this.start(name)));
  }

  stopAll(): void {
    for (const member of this.members.values()) member.stop();
  }

  /** Every running member sees exactly `expected` as live. */
  agree(expected: string[]): boolean {
    const want = [...expected].sort().join(",");
    return [...this.members.values()].every((m) => [...m.live()].sort().join(",") === want);
  }

  declaredDead(node: string): number {
    return [...this.events.values()].flat().filter((e) => e.kind === "declared-dead" && e.node === node)
      .length;
  }
}

async function cluster(size: number, restartHoldMs?: number): Promise<Cluster> {
  const c = new Cluster(size, await freePort(), restartHoldMs);
  onTestFinished(() => c.stopAll());
  await c.startAll();
  await waitFor(`${size} members to agree on who is alive`, () => c.agree([...c.peers.keys()]));
  return c;
}

test("a crashed member is noticed by all, and a restarted one is taken back", async () => {
  const c = await cluster(5);
  const names = [...c.peers.keys()];
  c.members.get("node-2")!.stop();
  c.members.delete("node-2");
  const survivors = names.filter((n) => n !== "node-2");
  await waitFor("the others to drop the crashed member", () => c.agree(survivors));
  expect(c.declaredDead("node-2")).toBeGreaterThan(0);

  await c.start("node-2");
  await waitFor("the restarted member to be live everywhere", () => c.agree(names));
});

test("a member that leaves is dropped at once, without anyone declaring it dead", async () => {
  const c = await cluster(5);
  const leaving = c.members.get("node-3")!;
  c.members.delete("node-3");
  await leaving.leave();
  await waitFor("the others to drop the member that left", () =>
    c.agree([...c.peers.keys()].filter((n) => n !== "node-3")),
  );
  expect(c.declaredDead("node-3")).toBe(0);
});

test("a member restarting in place stays a member, undeclared, until its new run joins", async () => {
  const c = await cluster(4);
  const names = [...c.peers.keys()];
  const restarting = c.members.get("node-1")!;
  c.members.delete("node-1");
  await restarting.announceLeave("restarting");
  restarting.stop();
  // Long past the failure detection (D = 500 ms), counted in the others' probe rounds.
  const sent = () =>
    [...c.members.values()].map((m) => c.events.get(m.view.self)!.filter((e) => e.kind === "sent").length);
  const before = sent();
  await waitFor(
    "every other member to send 120 more datagrams (about 2 s)",
    () => sent().every((n, i) => n - before[i]! >= 120) || undefined,
  );
  expect(c.agree(names)).toBe(true);
  expect(c.declaredDead("node-1")).toBe(0);
  for (const m of c.members.values()) expect(m.view.live()).not.toContain("node-1");

  await c.start("node-1");
  await waitFor(
    "the new run to be live everywhere",
    () => [...c.members.values()].every((m) => m.view.live().length === names.length) || undefined,
  );
  expect(c.agree(names)).toBe(true);
});

test("a member restarting in place whose new run never comes is dropped when its hold ends", async () => {
  const c = await cluster(4, 1500);
  const restarting = c.members.get("node-2")!;
  c.members.delete("node-2");
  await restarting.announceLeave("restarting");
  restarting.stop();
  const from = Date.now();
  await waitFor("the others to drop it", () => c.agree([...c.peers.keys()].filter((n) => n !== "node-2")));
  expect(Date.now() - from).toBeGreaterThanOrEqual(1500);
  expect(c.declaredDead("node-2")).toBe(0);
});

test("a member wrongly declared dead refutes it and stays live", async () => {
  const c = await cluster(4);
  const accuser = c.members.get("node-0")!;
  // A rumour of node-1's death, as a lossy link could make one watcher believe.
  accuser.view.merge({
    node: "node-1",
    incarnation: c.members.get("node-1")!.view.incarnation,
    status: "dead",
  });
  await waitFor("every member to see node-1 alive again", () => c.agree([...c.peers.keys()]), {
    timeoutMs: 10_000,
  });
  expect(c.events.get("node-1")!.some((e) => e.kind === "refuted")).toBe(true);
});

test("the message rate per member does not grow with the cluster", async () => {
  const rates: string[] = [];
  for (const size of [8, 48]) {
    const c = await cluster(size);
    const sent = () => [...c.events.values()].flat().filter((e) => e.kind === "sent").length;
    const before = sent();
    const start = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const perMemberPerSecond = (sent() - before) / size / ((Date.now() - start) / 1000);
    rates.push(`${size} members: ${perMemberPerSecond.toFixed(1)} datagrams/s each`);
    // Each interval a member pings its FANOUT successors and one random node and acks what it receives:
    // 2 * (FANOUT + 1) per interval on average, however many members there are.
    expect(perMemberPerSecond).toBeLessThanOrEqual(2 * (FANOUT + 1) * (1000 / INTERVAL_MS) * 1.2);
    c.stopAll();
  }
  console.log(`membership cost: ${rates.join("; ")}`);
});
