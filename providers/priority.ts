// Which of the controller's work a cloud call serves: a change a user waits for ("user", the default) or work
// nothing asked for (the periodic resync, orphan collection: "background"). A provider's client-side rate limit
// serves user work first. Carried through AsyncLocalStorage, so every call made within, however deep, has it.
import { AsyncLocalStorage } from "node:async_hooks";

export type Priority = "user" | "background";

const priority = new AsyncLocalStorage<Priority>();

/** Runs `fn` (and every cloud call made within it) at the given priority. */
export function withPriority<T>(p: Priority, fn: () => T): T {
  return priority.run(p, fn);
}

export function currentPriority(): Priority {
  return priority.getStore() ?? "user";
}
