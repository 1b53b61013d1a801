// Portico's public IP of an owner shared by three Services, any of them deleted together, their reconciles running
// in every order. Each deleted Service's reconcile is three steps, as the provider takes them: it observes (and
// takes its rules off the load balancer), it leaves the public IP (the plan's operation, made from its own
// observation, carried out on the tags as they are then), and its finalizer goes (the Service is gone). Every
// interleaving of those steps is explored, as the graph of the states they reach; in each state no tag names a
// Service that is gone, the public IP is deleted only once nobody has rules on it, and at the end it is gone with
// all of them or owned by one that stays, with the others that stay on its list.
import { describe, expect, it } from "vitest";
import { frontendName, ownershipTags, TAG } from "../names.ts";
import { planDeletion } from "../plan/plan.ts";
import { settleLeave, sharersOf, type Holders } from "./shared.ts";
import { CLUSTER, publicIp } from "../../../test/unit/support/azure.ts";

const uid = (n: number) => `0e0e0e0e-0000-4000-8000-${String(n).padStart(12, "0")}`;
const OWNER = uid(0);
const SERVICES = [OWNER, uid(1), uid(2), uid(3)];
const nameOf = (u: string) => `shop/svc-${SERVICES.indexOf(u)}`;

type Tags = Record<string, string>;
type State = "live" | "deleting" | "gone";

interface World {
  /** The public IP's tags; null once it is deleted. */
  tags: Tags | null;
  status: Record<string, State>;
  /** Steps each Service being deleted has taken: 0 none, 1 observed, 2 left, 3 finalizer gone. */
  progress: Record<string, number>;
  /** The public IP's tags as each Service observed them (null: it was already gone). */
  seen: Record<string, Tags | null>;
  /** Services whose rules are still on the public IP's frontend. */
  rules: string[];
}

const initialTags = (): Tags => ({
  ...ownershipTags(CLUSTER, { namespace: "shop", name: "svc-0", uid: OWNER }, "publicip"),
  [TAG.sharedWith]: SERVICES.slice(1).join(","),
});

const holdersIn = (w: World): Holders => ({ state: (u) => w.status[u] ?? "gone", name: nameOf });

/** The status and rules follow from the progress; an observation matters only until its Service has left. */
const keyOf = (w: World) => JSON.stringify([w.tags, w.progress, w.seen]);

/** Service `u` takes its next step; throws when a rule of the design is broken. */
function step(w: World, u: string): World {
  const next: World = {
    tags: w.tags,
    status: { ...w.status },
    progress: { ...w.progress },
    seen: { ...w.seen },
    rules: w.rules,
  };
  const p = w.progress[u]!;
  next.progress[u] = p + 1;
  if (p === 0) {
    next.seen[u] = w.tags && { ...w.tags };
    next.rules = w.rules.filter((r) => r !== u);
  } else if (p === 1) {
    const seen = w.seen[u];
    const observed = { loadBalancers: [], publicIps: seen ? [publicIp("shared", { tags: seen })] : [] };
    const ops = planDeletion({ uid: u }, frontendName(u), CLUSTER, observed, "IPv4", holdersIn(w));
    for (const op of ops) {
      if (op.kind !== "leavePublicIp" || !next.tags) continue;
      const done = settleLeave(op, next.tags, holdersIn(w));
      if (!done) continue;
      if ("delete" in done) {
        if (next.rules.length) throw new Error(`deleted while ${next.rules.join(", ")} still use it`);
        next.tags = null;
      } else next.tags = done.tags;
    }
    delete next.seen[u];
  } else next.status[u] = "gone";
  if (next.tags) {
    const onTags = [next.tags[TAG.serviceUid], ...sharersOf({ tags: next.tags })].filter(Boolean);
    const gone = onTags.filter((t) => next.status[t!] === "gone");
    if (gone.length) throw new Error(`the tags name ${gone.join(", ")}, already gone`);
  }
  return next;
}

/** Explores every order; returns how many there are (paths to the end), checking each end. */
function explore(deleted: string[]): number {
  const start: World = {
    tags: initialTags(),
    status: Object.fromEntries(SERVICES.map((u) => [u, deleted.includes(u) ? "deleting" : "live"])),
    progress: Object.fromEntries(deleted.map((u) => [u, 0])),
    seen: {},
    rules: [...SERVICES],
  };
  const paths = new Map<string, number>();
  const visit = (w: World, trail: string[]): number => {
    const key = keyOf(w);
    const known = paths.get(key);
    if (known !== undefined) return known;
    const movable = deleted.filter((u) => w.progress[u]! < 3);
    let count = 0;
    if (!movable.length) {
      checkEnd(w, deleted, trail);
      count = 1;
    }
    for (const u of movable) {
      let next: World;
      try {
        next = step(w, u);
      } catch (err) {
        throw new Error(`${(err as Error).message}, after ${[...trail, u].map(nameOf).join(" ")}`, {
          cause: err,
        });
      }
      count += visit(next, [...trail, u]);
    }
    paths.set(key, count);
    return count;
  };
  return visit(start, []);
}

function checkEnd(w: World, deleted: string[], trail: string[]): void {
  const staying = SERVICES.filter((u) => !deleted.includes(u));
  const at = `after ${trail.map(nameOf).join(" ")}`;
  if (!staying.length) {
    expect(w.tags, `the public IP is left ${at}`).toBeNull();
    return;
  }
  expect(w.tags, `the public IP is deleted ${at}`).not.toBeNull();
  const owner = w.tags![TAG.serviceUid]!;
  expect(staying, `owned by ${owner} ${at}`).toContain(owner);
  expect(w.tags![TAG.service]).toBe(nameOf(owner));
  expect([owner, ...sharersOf({ tags: w.tags! })].sort(), at).toEqual(staying.sort());
}

/** Every non-empty subset of the four Services. */
const subsets = Array.from({ length: 15 }, (_, i) => SERVICES.filter((_u, b) => (i + 1) & (1 << b)));

const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));

describe("a shared public IP whose Services are deleted together", () => {
  it.each(subsets.map((s) => [s.map(nameOf).join(" + "), s] as const))(
    "deleting %s: every order leaves nothing behind, or the public IP with a Service that stays",
    (_, deleted) => {
      // Three steps a Service, each Service's in its order: (3k)! / (3!)^k interleavings.
      expect(explore(deleted)).toBe(factorial(3 * deleted.length) / 6 ** deleted.length);
    },
  );
});
