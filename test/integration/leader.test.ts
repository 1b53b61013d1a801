import { CoordinationV1Api, KubeConfig, V1MicroTime, type V1Lease } from "@kubernetes/client-node";
import { createServer, connect, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { onTestFinished } from "vitest";
import { LeaderElector, type LeaderElectionOptions } from "../../controller/runtime/leader.ts";
import { expect, test, waitFor, type TestCluster } from "../harness/index.ts";

const LEASE = "portico-controller";

/**
 * Short timings so that a test sees several renewals and expiries in seconds (the Lease says 2s: 1.5s rounded
 * up).
 */
const FAST = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };

/**
 * One replica: an elector plus a record of what its callbacks saw. Its work runs until the leadership signal
 * aborts and then takes `drainMs` to wind down, like a controller finishing the reconciles in flight.
 */
class Replica {
  readonly elector: LeaderElector;
  readonly identity: string;
  readonly signals: AbortSignal[] = [];
  readonly newLeaders: string[] = [];
  stoppedLeading = 0;
  private readonly running: Promise<void>;

  constructor(
    world: World,
    identity: string,
    opts: Partial<LeaderElectionOptions> & { drainMs?: number } = {},
  ) {
    this.identity = identity;
    this.elector = new LeaderElector({
      coordination: world.cluster.coordination,
      namespace: world.cluster.namespace,
      name: LEASE,
      identity,
      ...FAST,
      ...opts,
    });
    world.replicas.push(this);
    this.running = this.elector.run({
      onStartedLeading: async (signal) => {
        this.signals.push(signal);
        world.workStarted(this);
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        await sleep(opts.drainMs ?? 0);
        world.workEnded();
      },
      onStoppedLeading: () => this.stoppedLeading++,
      onNewLeader: (leader) => this.newLeaders.push(leader),
    });
  }

  get isLeader(): boolean {
    return this.elector.isLeader;
  }

  get terms(): number {
    return this.signals.length;
  }

  async stop(): Promise<void> {
    await this.elector.stop();
    await this.running;
  }
}

/**
 * Everything the replicas of one test share, watched throughout: how many believe they lead at once (sampled
 * every few milliseconds) and how many leaders' work is running at once (counted exactly).
 */
class World {
  readonly cluster: TestCluster;
  readonly replicas: Replica[] = [];
  /** Replicas whose work started while they did not believe they lead. */
  readonly workWithoutLeadership: string[] = [];
  maxLeadersAtOnce = 0;
  maxWorkAtOnce = 0;
  private work = 0;
  private readonly sampler: NodeJS.Timeout;

  constructor(cluster: TestCluster) {
    this.cluster = cluster;
    this.sampler = setInterval(() => this.sample(), 5);
    // A failed test must not leave replicas campaigning behind it.
    onTestFinished(() => this.stopAll());
  }

  private sample(): void {
    const leaders = this.replicas.filter((r) => r.isLeader).length;
    this.maxLeadersAtOnce = Math.max(this.maxLeadersAtOnce, leaders);
  }

  workStarted(replica: Replica): void {
    this.sample();
    if (!replica.isLeader) this.workWithoutLeadership.push(replica.identity);
    this.work++;
    this.maxWorkAtOnce = Math.max(this.maxWorkAtOnce, this.work);
  }

  workEnded(): void {
    this.work--;
  }

  leader(): Promise<Replica> {
    return waitFor("a leader", () => {
      const leaders = this.replicas.filter((r) => r.isLeader);
      return leaders.length === 1 ? leaders[0] : undefined;
    });
  }

  lease(): Promise<V1Lease> {
    return this.cluster.coordination.readNamespacedLease({ name: LEASE, namespace: this.cluster.namespace });
  }

  private async stopAll(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.stop()));
    clearInterval(this.sampler);
  }

  /** Stops every replica and checks what was watched throughout. */
  async end(): Promise<void> {
    await this.stopAll();
    expect(this.maxLeadersAtOnce).toBeLessThanOrEqual(1);
    expect(this.maxWorkAtOnce).toBeLessThanOrEqual(1);
    expect(this.workWithoutLeadership).toEqual([]);
  }
}

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

test("one of two replicas leads, renews its Lease and is reported to both", async ({ cluster }) => {
  const world = new World(cluster);
  // Roomier than FAST: this test asserts that nothing changes hands, which a stalled machine must not upset.
  const steady = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 200 };
  const a = new Replica(world, "replica-a", steady);
  const b = new Replica(world, "replica-b", steady);
  const leader = await world.leader();
  const follower = leader === a ? b : a;

  const first = await world.lease();
  expect(first.spec).toMatchObject({
    holderIdentity: leader.identity,
    leaseDurationSeconds: 3,
    leaseTransitions: 0,
  });
  // client-node 2.x hands MicroTime fields back as the apiserver's strings, microseconds included.
  expect(String(first.spec!.acquireTime)).toMatch(MICRO_TIME);
  expect(String(first.spec!.renewTime)).toMatch(MICRO_TIME);

  const renewed = await waitFor("a renewal", async () => {
    const lease = await world.lease();
    return String(lease.spec!.renewTime) !== String(first.spec!.renewTime) ? lease : undefined;
  });
  expect(renewed.spec!.holderIdentity).toBe(leader.identity);
  expect(String(renewed.spec!.acquireTime)).toBe(String(first.spec!.acquireTime));

  // Nothing changes hands while the leader renews: shown by renewals spanning more than a lease duration (the
  // follower, which tries every retry period, would have taken an expired Lease meanwhile), not by waiting.
  const renewedAt = (lease: { spec?: { renewTime?: unknown } }) => Date.parse(String(lease.spec!.renewTime));
  await waitFor(
    "renewals spanning more than a lease duration",
    async () => renewedAt(await world.lease()) - renewedAt(first) > steady.leaseDurationMs,
    { timeoutMs: 20_000 },
  );
  expect(leader.isLeader).toBe(true);
  expect(follower.isLeader).toBe(false);
  expect([leader.terms, follower.terms]).toEqual([1, 0]);
  expect((await world.lease()).spec!.leaseTransitions).toBe(0);
  await waitFor("both replicas told who leads", () =>
    [a, b].every((r) => r.newLeaders.join() === leader.identity),
  );
  await world.end();
});

test("a leader that stops gracefully lets its work finish, releases the Lease and is replaced at once", async ({
  cluster,
}) => {
  const world = new World(cluster);
  // A long lease: a handover that waited for expiry instead of the release would take 10s.
  const slow = { leaseDurationMs: 10_000, renewDeadlineMs: 6000, retryPeriodMs: 200, drainMs: 300 };
  const a = new Replica(world, "replica-a", slow);
  await waitFor("replica-a to lead", () => a.isLeader);
  const b = new Replica(world, "replica-b", slow);
  await waitFor("replica-b to see replica-a lead", () => b.newLeaders.includes("replica-a"));

  const stopped = a.stop();
  expect(a.isLeader).toBe(false);
  expect(a.signals[0]!.aborted).toBe(true);
  await waitFor("replica-b to lead", () => b.isLeader, { timeoutMs: 4000 });
  await stopped;
  expect(a.stoppedLeading).toBe(1);

  const lease = await world.lease();
  expect(lease.spec).toMatchObject({
    holderIdentity: "replica-b",
    leaseTransitions: 1,
    leaseDurationSeconds: 10,
  });
  await world.end();
  // Stopping a leader releases; the last one leaves the Lease valid and without a holder.
  const released = await world.lease();
  expect(released.spec!.holderIdentity).toBe("");
  expect(released.spec!.leaseDurationSeconds).toBe(1);
  expect(String(released.spec!.renewTime)).toMatch(MICRO_TIME);
});

test("a leader that dies without releasing is replaced once its Lease expires", async ({ cluster }) => {
  const world = new World(cluster);
  const a = new Replica(world, "replica-a", { releaseOnStop: false });
  await waitFor("replica-a to lead", () => a.isLeader);
  const b = new Replica(world, "replica-b");
  await waitFor("replica-b to see replica-a lead", () => b.newLeaders.includes("replica-a"));

  const diedAt = performance.now();
  await a.stop();
  expect(a.stoppedLeading).toBe(1);
  expect((await world.lease()).spec!.holderIdentity).toBe("replica-a");

  await waitFor("replica-b to take over", () => b.isLeader, { timeoutMs: 10_000 });
  // The Lease says 2s and its last renewal was sent less than the 1s renew deadline before the death (or the
  // leader would have stepped down): the takeover cannot come sooner than 1s after it.
  expect(performance.now() - diedAt).toBeGreaterThan(800);
  expect((await world.lease()).spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 });
  await world.end();
});

test("a leader whose Lease is taken over by force stops at once, and campaigns again when that Lease expires", async ({
  cluster,
}) => {
  const world = new World(cluster);
  const a = new Replica(world, "replica-a");
  await waitFor("replica-a to lead", () => a.isLeader);

  const current = await world.lease();
  const now = new V1MicroTime();
  await cluster.coordination.replaceNamespacedLease({
    name: LEASE,
    namespace: cluster.namespace,
    body: {
      metadata: current.metadata,
      spec: {
        holderIdentity: "intruder",
        leaseDurationSeconds: 3,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 7,
      },
    },
  });
  const overwrittenAt = performance.now();

  await waitFor("replica-a to step down", () => !a.isLeader, { timeoutMs: FAST.renewDeadlineMs + 2000 });
  expect(a.signals[0]!.aborted).toBe(true);
  await waitFor("onStoppedLeading", () => a.stoppedLeading === 1);

  // Nobody renews the intruder's Lease; replica-a takes it once it has seen it unchanged for 3s.
  await waitFor("replica-a to lead again", () => a.isLeader, { timeoutMs: 15_000 });
  expect(performance.now() - overwrittenAt).toBeGreaterThan(2500);
  expect(a.terms).toBe(2);
  expect(a.signals[1]!.aborted).toBe(false);
  expect(a.newLeaders).toEqual(["replica-a", "intruder", "replica-a"]);
  expect((await world.lease()).spec).toMatchObject({ holderIdentity: "replica-a", leaseTransitions: 8 });
  await world.end();
});

test("a leader cut off from the apiserver, its requests hanging, steps down within the renew deadline", async ({
  cluster,
}) => {
  const world = new World(cluster);
  const proxy = await TcpProxy.start(cluster.kubeConfig);
  try {
    const a = new Replica(world, "replica-a", { coordination: proxy.coordination });
    await waitFor("replica-a to lead", () => a.isLeader);
    const b = new Replica(world, "replica-b");
    await waitFor("replica-b to see replica-a lead", () => b.newLeaders.includes("replica-a"));

    proxy.blackhole();
    await waitFor("replica-a to step down", () => !a.isLeader, { timeoutMs: FAST.renewDeadlineMs + 2000 });
    expect(a.signals[0]!.aborted).toBe(true);
    expect(a.stoppedLeading).toBe(1);

    await waitFor("replica-b to take over", () => b.isLeader, { timeoutMs: 10_000 });
    // Stopping must not hang on the requests the dead connection swallowed.
    let stopped = false;
    void a.stop().then(() => (stopped = true));
    await waitFor("replica-a's stop() to return", () => stopped, { timeoutMs: 3000 });
    await world.end();
  } finally {
    await proxy.close();
  }
});

test("Lease expiry is judged by the local clock, never by the holder's renewTime", async ({ cluster }) => {
  const world = new World(cluster);
  const skewed = (offsetMs: number) => new V1MicroTime(Date.now() + offsetMs);
  const lease = await cluster.coordination.createNamespacedLease({
    namespace: cluster.namespace,
    body: {
      metadata: { name: LEASE },
      spec: {
        holderIdentity: "skewed-holder",
        leaseDurationSeconds: 2,
        acquireTime: skewed(-3_600_000),
        renewTime: skewed(-3_600_000),
        leaseTransitions: 3,
      },
    },
  });

  // A holder whose clock runs an hour behind keeps renewing: its Lease is alive although renewTime looks
  // stale.
  const a = new Replica(world, "replica-a");
  let latest = lease;
  for (let i = 0; i < 6; i++) {
    await sleep(400);
    latest = await cluster.coordination.replaceNamespacedLease({
      name: LEASE,
      namespace: cluster.namespace,
      body: { metadata: latest.metadata, spec: { ...latest.spec, renewTime: skewed(-3_600_000 + i) } },
    });
    expect(a.isLeader).toBe(false);
  }
  expect(a.newLeaders).toEqual(["skewed-holder"]);

  // Once it stops renewing, the Lease expires 2s after replica-a last saw it change.
  const lastRenewal = performance.now();
  await waitFor("replica-a to take over", () => a.isLeader, { timeoutMs: 10_000 });
  expect(performance.now() - lastRenewal).toBeGreaterThan(1500);
  expect((await world.lease()).spec).toMatchObject({ holderIdentity: "replica-a", leaseTransitions: 4 });
  await world.end();
});

test("through repeated failovers, graceful and not, no two replicas ever lead or work at once", async ({
  cluster,
}) => {
  const world = new World(cluster);
  let next = 0;
  const spawn = (releaseOnStop: boolean) =>
    new Replica(world, `replica-${next++}`, { releaseOnStop, drainMs: 100 });
  for (let i = 0; i < 3; i++) spawn(i % 2 === 0);

  for (let round = 0; round < 4; round++) {
    const leader = await world.leader();
    await leader.stop();
    spawn(round % 2 === 1);
  }
  await world.leader();
  expect(world.replicas.filter((r) => r.terms > 0).length).toBeGreaterThanOrEqual(5);
  await world.end();
  expect(world.maxLeadersAtOnce).toBe(1);
  expect(world.maxWorkAtOnce).toBe(1);
});

test("misconfigured timings are refused", ({ cluster }) => {
  const base = {
    coordination: cluster.coordination,
    namespace: cluster.namespace,
    name: LEASE,
    identity: "x",
  };
  expect(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000 })).toThrow(
    /leaseDuration > renewDeadline > retryPeriod/,
  );
  expect(() => new LeaderElector({ ...base, renewDeadlineMs: 1000, retryPeriodMs: 2000 })).toThrow(
    /leaseDuration > renewDeadline > retryPeriod/,
  );
  expect(() => new LeaderElector({ ...base, identity: "" })).toThrow(/identity/);
});

/**
 * A TCP relay in front of the apiserver. blackhole() makes it swallow every byte from then on, on open
 * connections and new ones alike, as a partitioned network does: requests neither fail nor finish.
 */
class TcpProxy {
  readonly coordination: CoordinationV1Api;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly state: { swallowing: boolean };

  private constructor(
    server: Server,
    sockets: Set<Socket>,
    state: { swallowing: boolean },
    kubeConfig: KubeConfig,
  ) {
    this.server = server;
    this.sockets = sockets;
    this.state = state;
    const { port } = server.address() as { port: number };
    const proxied = new KubeConfig();
    proxied.loadFromOptions({
      clusters: kubeConfig.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${port}` })),
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
    });
    this.coordination = proxied.makeApiClient(CoordinationV1Api);
  }

  static async start(kubeConfig: KubeConfig): Promise<TcpProxy> {
    const upstream = new URL(kubeConfig.getCurrentCluster()!.server);
    const sockets = new Set<Socket>();
    const state = { swallowing: false };
    const server = createServer((client) => {
      const apiserver = connect(Number(upstream.port), upstream.hostname);
      const pairs: [Socket, Socket][] = [
        [client, apiserver],
        [apiserver, client],
      ];
      for (const [from, to] of pairs) {
        sockets.add(from);
        from.on("data", (chunk) => {
          if (!state.swallowing) to.write(chunk);
        });
        from.on("error", () => to.destroy());
        from.on("close", () => {
          sockets.delete(from);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return new TcpProxy(server, sockets, state, kubeConfig);
  }

  blackhole(): void {
    this.state.swallowing = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
