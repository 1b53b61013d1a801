// A new Service's search for a free address starts where the last one found one (allocator.ts): it must find
// exactly what a search from the pool's first address would, whatever was assigned, moved and freed before.
import { describe, expect, it } from "vitest";
import { Allocator } from "./allocator.ts";
import type { AssignResult } from "../../shared/allocationTypes.ts";
import { poolAddresses } from "../../shared/pool.ts";
import { pool, service } from "../../test/unit/support/metal.ts";
import { seededRandom } from "../../test/harness/random.ts";

function addressOf(result: AssignResult): string | undefined {
  return result.ok ? result.addresses[0]?.address : undefined;
}

describe("where a new Service's search starts", () => {
  it("finds an address freed before the place the last search stopped", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.1-10.0.0.5"] })]);
    for (const s of ["a", "b", "c"]) allocator.assign(service(`ns/${s}`));
    allocator.release("ns/a");
    expect(addressOf(allocator.assign(service("ns/d")))).toBe("10.0.0.1");
    expect(addressOf(allocator.assign(service("ns/e")))).toBe("10.0.0.4");
  });

  it("finds an address a Service moved away from", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.1-10.0.0.9"] })]);
    allocator.assign(service("ns/a"));
    allocator.assign(service("ns/b"));
    // a moves to a requested address: 10.0.0.1 is free again.
    expect(addressOf(allocator.assign(service("ns/a"), { addresses: ["10.0.0.8"] }))).toBe("10.0.0.8");
    expect(addressOf(allocator.assign(service("ns/c")))).toBe("10.0.0.1");
  });

  it("finds an address freed in a pool that was full, across ranges", () => {
    const allocator = new Allocator([pool("p", { addresses: ["10.0.0.1-10.0.0.2", "10.0.1.7/32"] })]);
    for (const s of ["a", "b", "c"]) allocator.assign(service(`ns/${s}`));
    expect(allocator.assign(service("ns/d")).ok).toBe(false);
    allocator.release("ns/c");
    expect(addressOf(allocator.assign(service("ns/d")))).toBe("10.0.1.7");
  });

  it("gives what a search from the first address gives, over random assignments, moves and releases", () => {
    const spec = {
      addresses: ["10.0.0.1-10.0.0.20", "10.0.3.0/29", "10.0.1.250-10.0.2.3"],
      avoidBuggyIPs: true,
    };
    const order = [...poolAddresses(pool("p", spec), "IPv4")].map((a) => a.text);
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const next = seededRandom(seed);
      const allocator = new Allocator([pool("p", spec)]);
      const held = new Map<string, string>();
      for (let step = 0; step < 300; step++) {
        const roll = next();
        const keys = [...held.keys()];
        if (roll < 0.55) {
          const key = `ns/s${step}`;
          const taken = new Set(held.values());
          const expected = order.find((a) => !taken.has(a));
          const got = addressOf(allocator.assign(service(key)));
          expect(got, `seed ${seed}, step ${step}`).toBe(expected);
          if (got) held.set(key, got);
        } else if (roll < 0.85 && keys.length) {
          const key = keys[Math.floor(next() * keys.length)]!;
          allocator.release(key);
          held.delete(key);
        } else if (keys.length) {
          // A Service asks for a free address of its own choosing: it moves there.
          const key = keys[Math.floor(next() * keys.length)]!;
          const taken = new Set(held.values());
          const free = order.filter((a) => !taken.has(a));
          if (!free.length) continue;
          const to = free[Math.floor(next() * free.length)]!;
          expect(addressOf(allocator.assign(service(key), { addresses: [to] }))).toBe(to);
          held.set(key, to);
        }
      }
    }
  });
});
