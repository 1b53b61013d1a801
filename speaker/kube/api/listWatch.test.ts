import type { KubernetesObject } from "@kubernetes/client-node";
import { describe, expect, test, vi } from "vitest";
import { KubeApiError, type KubeApi, type WatchEventType } from "./client.ts";
import { ListWatch } from "./listWatch.ts";

type Obj = KubernetesObject & { data?: string; junk?: string };
type Page = { items: Obj[]; metadata: { resourceVersion: string; continue?: string } };

const obj = (name: string, rv: string, data = "x"): Obj => ({
  metadata: { name, namespace: "ns", resourceVersion: rv },
  data,
  junk: "big",
});

/** An apiserver scripted by the test: list answers are queued, each watch is kept for the test to drive. */
class FakeApi {
  lists: (Page | Error)[] = [];
  readonly listQueries: Record<string, unknown>[] = [];
  readonly watches: {
    query: Record<string, unknown>;
    send: (type: WatchEventType, object: Record<string, unknown>) => void;
    end: (err?: unknown) => void;
    aborted: boolean;
  }[] = [];

  get(_path: string, query: Record<string, unknown>): Promise<Page> {
    this.listQueries.push(query);
    const next = this.lists.shift();
    if (!next) return Promise.reject(new Error("no list scripted"));
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }

  watch(
    _path: string,
    query: Record<string, unknown>,
    onEvent: (type: WatchEventType, object: Record<string, unknown>) => void,
    done: (err?: unknown) => void,
  ) {
    const entry = { query, send: onEvent, end: done, aborted: false };
    this.watches.push(entry);
    return { abort: () => void (entry.aborted = true) };
  }

  get lastWatch() {
    return this.watches[this.watches.length - 1]!;
  }
}

function listWatch(api: FakeApi, pageSize?: number) {
  const lw = new ListWatch<Obj>(api as unknown as KubeApi, "/api/v1/configmaps", {
    labelSelector: "a=b",
    trim: (o) => delete o.junk,
    ...(pageSize ? { pageSize } : {}),
  });
  const seen: string[] = [];
  const errors: unknown[] = [];
  lw.on("add", (o) => seen.push(`add ${o.metadata!.name}@${o.metadata!.resourceVersion}`));
  lw.on("update", (o) => seen.push(`update ${o.metadata!.name}@${o.metadata!.resourceVersion}`));
  lw.on("delete", (o) => seen.push(`delete ${o.metadata!.name}`));
  lw.on("error", (err) => errors.push(err));
  return { lw, seen, errors };
}

describe("the speaker's list-watch", () => {
  test("lists page by page, keeps trimmed objects, then watches from the list's resourceVersion", async () => {
    const api = new FakeApi();
    api.lists = [
      { items: [obj("a", "1"), obj("b", "2")], metadata: { resourceVersion: "10", continue: "page2" } },
      { items: [obj("c", "3")], metadata: { resourceVersion: "10" } },
    ];
    const { lw, seen } = listWatch(api, 2);
    await lw.start();
    expect(api.listQueries).toEqual([
      { labelSelector: "a=b", limit: 2, continue: undefined },
      { labelSelector: "a=b", limit: 2, continue: "page2" },
    ]);
    expect(seen).toEqual(["add a@1", "add b@2", "add c@3"]);
    expect(lw.get("a", "ns")).toEqual({
      metadata: { name: "a", namespace: "ns", resourceVersion: "1" },
      data: "x",
    });
    expect(lw.latestResourceVersion()).toBe("10");
    expect(api.lastWatch.query).toMatchObject({
      resourceVersion: "10",
      allowWatchBookmarks: true,
      labelSelector: "a=b",
    });
  });

  test("watch events add, update and delete; the same version twice is no update; bookmarks only move the version", async () => {
    const api = new FakeApi();
    api.lists = [{ items: [obj("a", "1")], metadata: { resourceVersion: "10" } }];
    const { lw, seen } = listWatch(api);
    await lw.start();
    const w = api.lastWatch;
    w.send("ADDED", obj("b", "11") as Record<string, unknown>);
    w.send("MODIFIED", obj("a", "12", "y") as Record<string, unknown>);
    w.send("MODIFIED", obj("a", "12", "y") as Record<string, unknown>);
    w.send("DELETED", obj("b", "13") as Record<string, unknown>);
    w.send("DELETED", obj("zz", "14") as Record<string, unknown>);
    w.send("BOOKMARK", { metadata: { resourceVersion: "20" } });
    expect(seen).toEqual(["add a@1", "add b@11", "update a@12", "delete b"]);
    expect(lw.list().map((o) => o.data)).toEqual(["y"]);
    expect(lw.latestResourceVersion()).toBe("20");
  });

  test("a watch the apiserver ends resumes from the last version, without listing again; at once only if it lasted", async () => {
    vi.useFakeTimers();
    try {
      const api = new FakeApi();
      api.lists = [{ items: [], metadata: { resourceVersion: "10" } }];
      const { lw } = listWatch(api);
      await lw.start();
      api.lastWatch.send("BOOKMARK", { metadata: { resourceVersion: "15" } });
      vi.advanceTimersByTime(5000);
      api.lastWatch.end();
      expect(api.watches).toHaveLength(2);
      expect(api.lastWatch.query.resourceVersion).toBe("15");
      // Ended as soon as it began: resumed a second later, not in a loop.
      api.lastWatch.end();
      expect(api.watches).toHaveLength(2);
      vi.advanceTimersByTime(999);
      expect(api.watches).toHaveLength(2);
      vi.advanceTimersByTime(1);
      expect(api.watches).toHaveLength(3);
      expect(api.listQueries).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  test("410 (as an event or as the watch's answer) lists again and tells the handlers what changed meanwhile", async () => {
    for (const how of ["event", "answer"] as const) {
      const api = new FakeApi();
      api.lists = [
        { items: [obj("a", "1"), obj("b", "2")], metadata: { resourceVersion: "10" } },
        { items: [obj("a", "1"), obj("c", "30")], metadata: { resourceVersion: "31" } },
      ];
      const { lw, seen, errors } = listWatch(api);
      await lw.start();
      if (how === "event") {
        api.lastWatch.send("ERROR", { kind: "Status", code: 410, message: "too old resource version" });
        api.lastWatch.end();
      } else {
        api.lastWatch.end(new KubeApiError(410, "Expired"));
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual(["add a@1", "add b@2", "add c@30", "delete b"]);
      expect(errors).toEqual([]);
      expect(api.lastWatch.query.resourceVersion).toBe("31");
    }
  });

  test("any other failure stops it and is reported; start() resumes from the last version", async () => {
    const api = new FakeApi();
    api.lists = [{ items: [obj("a", "1")], metadata: { resourceVersion: "10" } }];
    const { lw, errors } = listWatch(api);
    await lw.start();
    const failed = api.lastWatch;
    failed.end(new Error("connection reset"));
    expect(errors).toEqual([new Error("connection reset")]);
    expect(api.watches).toHaveLength(1);
    await lw.start();
    expect(api.watches).toHaveLength(2);
    expect(api.lastWatch.query.resourceVersion).toBe("10");
    // A late event of the failed watch changes nothing.
    failed.send("ADDED", obj("late", "99") as Record<string, unknown>);
    expect(lw.get("late", "ns")).toBeUndefined();
  });

  test("an ERROR event other than 410 fails the watch with its code; a failed list is reported, not thrown", async () => {
    const api = new FakeApi();
    api.lists = [new KubeApiError(404, "the server could not find the requested resource")];
    const { lw, errors } = listWatch(api);
    await lw.start();
    expect((errors[0] as KubeApiError).code).toBe(404);
    expect(lw.latestResourceVersion()).toBe("");

    api.lists = [{ items: [], metadata: { resourceVersion: "5" } }];
    await lw.start();
    api.lastWatch.send("ERROR", { kind: "Status", code: 500, message: "internal error" });
    expect((errors[1] as KubeApiError).code).toBe(500);
    expect(api.lastWatch.aborted).toBe(true);
  });

  test("stop() aborts the watch and nothing restarts it", async () => {
    const api = new FakeApi();
    api.lists = [{ items: [], metadata: { resourceVersion: "5" } }];
    const { lw, errors } = listWatch(api);
    await lw.start();
    await lw.stop();
    expect(api.lastWatch.aborted).toBe(true);
    api.lastWatch.end();
    api.lastWatch.end(new Error("late"));
    expect(api.watches).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
