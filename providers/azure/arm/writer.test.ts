// The etag writer against an in-memory resource that behaves like ARM's: an etag per version, 412 for a stale
// If-Match, and 409 while a write is still running.
import { describe, expect, it } from "vitest";
import { CloudError } from "../../errors.ts";
import { EtagWriter, type ResourceAccess } from "./writer.ts";

interface Doc {
  etag?: string;
  items: string[];
  provisioningState?: string;
}

const armError = (statusCode: number, code: string, retryAfter?: string) =>
  Object.assign(new Error(code), {
    name: "RestError",
    statusCode,
    code,
    response: { headers: { get: (name: string) => (name === "retry-after" ? retryAfter : undefined) } },
  });

class FakeResource implements ResourceAccess<Doc> {
  operation = "docs";
  value: Doc | undefined;
  version = 0;
  puts = 0;
  deletes = 0;
  gets = 0;
  /** Answers for the next writes, before they are looked at. */
  script: Error[] = [];
  /** Runs before each write, to let another writer slip in. */
  beforeWrite?: () => void;
  /** Writes wait for this, to hold one in flight while others queue up. */
  gate?: Promise<void>;
  /** Bodies ARM would refuse (400). */
  refuse?: (body: Doc) => boolean;

  get(): Promise<Doc | undefined> {
    this.gets++;
    return Promise.resolve(this.value && structuredClone(this.value));
  }

  async put(body: Doc, condition: { ifMatch: string } | { ifNoneMatch: "*" }): Promise<Doc> {
    this.puts++;
    await this.gate;
    this.beforeWrite?.();
    if (this.refuse?.(body)) throw armError(400, "InvalidResourceReference");
    const scripted = this.script.shift();
    if (scripted) throw scripted;
    if ("ifMatch" in condition ? condition.ifMatch !== this.value?.etag : this.value)
      throw armError(412, "PreconditionFailed");
    this.value = { ...body, etag: `v${++this.version}` };
    return structuredClone(this.value);
  }

  delete(ifMatch: string): Promise<void> {
    this.deletes++;
    if (ifMatch !== this.value?.etag) return Promise.reject(armError(412, "PreconditionFailed"));
    this.value = undefined;
    return Promise.resolve();
  }
}

const add =
  (item: string) =>
  (doc: Doc | undefined): Doc | undefined => {
    const items = doc?.items ?? [];
    if (items.includes(item)) return doc;
    return { ...doc, items: [...items, item].sort() };
  };
const remove =
  (item: string) =>
  (doc: Doc | undefined): Doc | undefined => {
    if (!doc?.items.includes(item)) return doc;
    const items = doc.items.filter((i) => i !== item);
    return items.length ? { ...doc, items } : undefined;
  };
const noSleep = { sleep: () => Promise.resolve() };

describe("EtagWriter", () => {
  it("creates with If-None-Match, then updates with the etag it read", async () => {
    const r = new FakeResource();
    const w = new EtagWriter(noSleep);
    expect(await w.submit("k", r, add("a"))).toEqual({ items: ["a"], etag: "v1" });
    expect(await w.submit("k", r, add("b"))).toEqual({ items: ["a", "b"], etag: "v2" });
    expect(r.puts).toBe(2);
  });

  it("writes nothing when the edit changes nothing", async () => {
    const r = new FakeResource();
    r.value = { items: ["a"], etag: "v0" };
    const w = new EtagWriter(noSleep);
    expect(await w.submit("k", r, add("a"))).toEqual({ items: ["a"], etag: "v0" });
    expect(r.puts).toBe(0);
  });

  it("re-reads and re-applies the edit when another writer got in first (412), losing nothing", async () => {
    const r = new FakeResource();
    r.value = { items: ["a"], etag: "v0" };
    let raced = false;
    r.beforeWrite = () => {
      if (raced) return;
      raced = true;
      r.value = { items: ["a", "z"], etag: "v-other" };
    };
    const w = new EtagWriter(noSleep);
    expect(
      await w.submit("k", r, add("b"), { value: structuredClone(r.value), at: performance.now() }),
    ).toMatchObject({
      items: ["a", "b", "z"],
    });
    expect(r.puts).toBe(2);
  });

  it("waits for a resource busy with another operation (409) and tries again", async () => {
    const r = new FakeResource();
    r.script = [armError(409, "AnotherOperationInProgress", "2"), armError(429, "RetryableError", "60")];
    const waits: number[] = [];
    const w = new EtagWriter({ sleep: (ms) => Promise.resolve(void waits.push(ms)), maxWaitMs: 5000 });
    expect(await w.submit("k", r, add("a"))).toMatchObject({ items: ["a"] });
    // ARM's Retry-After, within reason.
    expect(waits).toEqual([2000, 5000]);
  });

  it("sends the edits that queue up while a write runs together in one write", async () => {
    const r = new FakeResource();
    const w = new EtagWriter(noSleep);
    const results = await Promise.all(["a", "b", "c", "d"].map((i) => w.submit("k", r, add(i))));
    expect(results.at(-1)).toMatchObject({ items: ["a", "b", "c", "d"] });
    expect(r.puts).toBe(2);
    expect(w.writes).toBe(2);
  });

  it("fails only the edit that throws, and writes the others", async () => {
    const r = new FakeResource();
    const w = new EtagWriter(noSleep);
    const bad = () => {
      throw new Error("this Service's configuration is wrong");
    };
    const outcomes = await Promise.allSettled([
      w.submit("k", r, add("a")),
      w.submit("k", r, bad),
      w.submit("k", r, add("c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(r.value?.items).toEqual(["a", "c"]);
  });

  it("retries each edit of a batch ARM refuses on its own, so one bad edit cannot sink the others", async () => {
    const r = new FakeResource();
    const w = new EtagWriter(noSleep);
    let release = () => {};
    r.gate = new Promise<void>((resolve) => (release = resolve));
    r.refuse = (body) => body.items.includes("b");
    const first = w.submit("k", r, add("a"));
    const batch = [w.submit("k", r, add("b")), w.submit("k", r, add("c"))];
    release();
    await first;
    const outcomes = await Promise.allSettled(batch);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled"]);
    expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(CloudError);
    expect(r.value?.items).toEqual(["a", "c"]);
  });

  it("deletes with the etag when the edit leaves nothing", async () => {
    const r = new FakeResource();
    r.value = { items: ["a"], etag: "v0" };
    const w = new EtagWriter(noSleep);
    expect(await w.submit("k", r, remove("a"))).toBeUndefined();
    expect(r.deletes).toBe(1);
    expect(r.value).toBeUndefined();
  });

  it("gives up after too many conflicts with a retryable error", async () => {
    const r = new FakeResource();
    r.value = { items: [], etag: "v0" };
    r.beforeWrite = () => void (r.value = { items: [], etag: `x${Math.random()}` });
    const w = new EtagWriter({ ...noSleep, maxAttempts: 3 });
    await expect(w.submit("k", r, add("a"))).rejects.toMatchObject({
      code: "TooManyConflicts",
      retryable: true,
    });
  });

  it("starts the next edit from the version it last wrote, not from an observation that began before that write", async () => {
    const r = new FakeResource();
    r.value = { items: [], etag: "v0" };
    const w = new EtagWriter(noSleep);
    // Both Services observed the resource before either wrote.
    const observed = { value: structuredClone(r.value), at: performance.now() };
    await w.submit("k", r, add("a"), observed);
    const gets = r.gets;
    expect(await w.submit("k", r, add("b"), observed)).toMatchObject({ items: ["a", "b"], etag: "v2" });
    // No write refused for a stale etag, and no read to learn what the first write made.
    expect([r.puts, r.gets - gets]).toEqual([2, 0]);
    // An observation that began after the write is newer, and is used: a change made by someone else since is kept.
    r.value = { items: ["a", "b", "z"], etag: "v-other" };
    const later = { value: structuredClone(r.value), at: performance.now() + 1 };
    expect(await w.submit("k", r, add("c"), later)).toMatchObject({ items: ["a", "b", "c", "z"] });
    expect(r.puts).toBe(3);
  });

  it("keeps different resources independent", async () => {
    const one = new FakeResource();
    const two = new FakeResource();
    const w = new EtagWriter(noSleep);
    await Promise.all([w.submit("one", one, add("a")), w.submit("two", two, add("b"))]);
    expect([one.value?.items, two.value?.items]).toEqual([["a"], ["b"]]);
  });
});
