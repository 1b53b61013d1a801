// A list-watch (an informer): lists a kind once, then keeps a cache of it current from a watch that resumes at
// the last resourceVersion seen — bookmarks keep that version fresh for quiet kinds, so a watch the apiserver
// ends (every few minutes) resumes without listing again. A resourceVersion too old to resume from (410) lists
// again, telling the handlers what changed meanwhile. Any other failure stops it and is reported to the "error"
// handlers; the owner restarts it with start() after its own backoff. Objects may be trimmed before they are
// kept: the cache keeps what its handlers get.
import type { KubernetesObject } from "@kubernetes/client-node";
import { KubeApiError, type KubeApi, type Watching } from "./client.ts";

type Verb = "add" | "update" | "delete";

export interface ListWatchOptions<T> {
  readonly labelSelector?: string | undefined;
  /** Applied to every object before it is kept or handed to a handler (drops what the speaker never reads). */
  readonly trim?: (obj: T) => void;
  /** Objects per list page (default 500, client-go's). */
  readonly pageSize?: number;
}

/** The apiserver ends a watch after this long (randomized, as client-go does, so watches do not end together). */
const WATCH_SECONDS_MIN = 300;
/** A watch the apiserver ends sooner than this is resumed only this long after it began. */
const MIN_WATCH_MS = 1000;
/** A watch quiet for longer than its own timeout plus this is a connection that died without a word. */
const IDLE_GRACE_MS = 30_000;

export class ListWatch<T extends KubernetesObject> {
  private readonly api: KubeApi;
  private readonly path: string;
  private readonly options: ListWatchOptions<T>;
  /** namespace/name → object. */
  private readonly objects = new Map<string, T>();
  private readonly handlers: Record<Verb, ((obj: T) => void)[]> = { add: [], update: [], delete: [] };
  private readonly errorHandlers: ((err: unknown) => void)[] = [];
  private readonly connectHandlers: (() => void)[] = [];
  private resourceVersion = "";
  private watching: Watching | undefined;
  private stopped = false;
  /** Bumped at each start and stop, so a late answer of an older round changes nothing. */
  private round = 0;

  constructor(api: KubeApi, path: string, options: ListWatchOptions<T> = {}) {
    this.api = api;
    this.path = path;
    this.options = options;
  }

  on(verb: Verb, handler: (obj: T) => void): void;
  on(verb: "error", handler: (err: unknown) => void): void;
  on(verb: "connect", handler: () => void): void;
  on(
    verb: Verb | "error" | "connect",
    handler: ((obj: T) => void) | ((err: unknown) => void) | (() => void),
  ): void {
    if (verb === "error") this.errorHandlers.push(handler as (err: unknown) => void);
    else if (verb === "connect") this.connectHandlers.push(handler as () => void);
    else this.handlers[verb].push(handler);
  }

  /** The objects kept, or those of one namespace. */
  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((obj) => obj.metadata?.namespace === namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(`${namespace ?? ""}/${name}`);
  }

  /** "" until the first list succeeded. */
  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Lists (unless it can resume) and starts watching; resolves once listed, or once a failure was reported. */
  async start(): Promise<void> {
    this.stopped = false;
    this.watching?.abort();
    const round = ++this.round;
    await this.connect(round);
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.round += 1;
    this.watching?.abort();
    this.watching = undefined;
    return Promise.resolve();
  }

  private async connect(round: number): Promise<void> {
    this.connectHandlers.forEach((handler) => handler());
    if (!this.resourceVersion) {
      let listed: { items: T[]; resourceVersion: string };
      try {
        listed = await this.listAll();
      } catch (err) {
        if (round === this.round) this.fail(err);
        return;
      }
      if (round !== this.round) return;
      this.replace(listed.items);
      this.resourceVersion = listed.resourceVersion;
    }
    this.watch(round);
  }

  /** Every object, a page at a time (as client-go lists), so a big kind never arrives as one huge answer. */
  private async listAll(): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let next: string | undefined;
    for (;;) {
      type Page = { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
      const page = await this.api.get<Page>(this.path, {
        labelSelector: this.options.labelSelector,
        limit: this.options.pageSize ?? 500,
        continue: next,
      });
      // Trimmed page by page, so a whole list of big objects never sits in memory at once.
      for (const item of page.items ?? []) {
        this.options.trim?.(item);
        items.push(item);
      }
      next = page.metadata?.continue || undefined;
      if (!next) return { items, resourceVersion: page.metadata?.resourceVersion ?? "" };
    }
  }

  private watch(round: number): void {
    const seconds = WATCH_SECONDS_MIN + Math.floor(Math.random() * WATCH_SECONDS_MIN);
    const query = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: seconds,
      labelSelector: this.options.labelSelector,
    };
    let expired = false;
    const began = Date.now();
    this.watching = this.api.watch(
      this.path,
      query,
      (type, object) => {
        if (round !== this.round) return;
        if (type === "ERROR") {
          // The apiserver says why it ends the watch; 410 means "list again", anything else fails it.
          expired = (object as { code?: number }).code === 410;
          if (!expired) this.fail(watchError(object));
          return;
        }
        const obj = object as unknown as T;
        this.resourceVersion = obj.metadata?.resourceVersion ?? this.resourceVersion;
        if (type === "BOOKMARK") return;
        if (type === "DELETED") return this.remove(obj);
        this.options.trim?.(obj);
        this.keep(obj);
      },
      (err) => {
        if (round !== this.round || this.stopped) return;
        if (expired || (err instanceof KubeApiError && err.code === 410)) {
          this.resourceVersion = "";
          void this.connect(round);
        } else if (err) {
          this.fail(err);
        } else if (Date.now() - began < MIN_WATCH_MS) {
          // Ended at once without a word: resuming at once could spin against a proxy that keeps doing so.
          setTimeout(() => round === this.round && !this.stopped && this.watch(round), MIN_WATCH_MS).unref();
        } else {
          this.watch(round);
        }
      },
      seconds * 1000 + IDLE_GRACE_MS,
    );
  }

  private fail(err: unknown): void {
    this.round += 1;
    this.watching?.abort();
    this.watching = undefined;
    if (!this.stopped) this.errorHandlers.forEach((handler) => handler(err));
  }

  /** A fresh list: what is gone is deleted, what is new or changed is kept, each told to the handlers. */
  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(keyOf(obj));
      this.keep(obj);
    }
    for (const [key, obj] of this.objects) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      this.handlers.delete.forEach((handler) => handler(obj));
    }
  }

  private keep(obj: T): void {
    const key = keyOf(obj);
    const before = this.objects.get(key);
    if (before && before.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.objects.set(key, obj);
    (before ? this.handlers.update : this.handlers.add).forEach((handler) => handler(obj));
  }

  private remove(obj: T): void {
    const key = keyOf(obj);
    const before = this.objects.get(key);
    if (!before) return;
    this.objects.delete(key);
    this.handlers.delete.forEach((handler) => handler(before));
  }
}

function keyOf(obj: KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

/** The Status an ERROR event carries, as the error it reports. */
function watchError(status: Record<string, unknown>): KubeApiError {
  const code = typeof status.code === "number" ? status.code : 500;
  return new KubeApiError(code, typeof status.message === "string" ? status.message : `watch error ${code}`);
}
