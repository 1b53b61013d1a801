// Waiting for a PUT by reading the resource it wrote, instead of polling its operation and then reading the
// resource (the SDK's way: PUT, GET operation until done, GET resource). A resource whose provisioningState is
// Succeeded under the etag the PUT answered with is that write, done: one read says both that it finished and
// what it made (a public IP's address, assigned only when its create completes). Anything else (still
// Updating: read again; Failed, or another etag because someone wrote after it) is left to the operation's own
// poller, which tells the operation's real outcome and error, so nothing is taken for success that was not.

/** The SDK's onResponse argument, as far as it is read here. */
export interface RawAnswer {
  parsedBody?: unknown;
  bodyAsText?: string | null;
  headers: { get(name: string): string | undefined };
}
export type RawResponseCallback = (raw: RawAnswer) => void;

/** What the SDK's createOrUpdate returns: the request sent by submitted(), the final result when awaited. */
export type PutPoller<T> = PromiseLike<T> & { submitted(): Promise<void> };

export interface Provisioned {
  etag?: string;
  provisioningState?: string;
}

/** Reads of a resource still Updating before the operation's own poller takes over. */
const MAX_READS = 30;

/**
 * `start(onResponse)` sends the PUT (through the SDK, passing `onResponse` in its options) and returns its poller;
 * `read` GETs the resource. Resolves with the resource as written, or rejects as the operation did.
 */
export async function putThenRead<T extends Provisioned>(
  start: (onResponse: RawResponseCallback) => PutPoller<T>,
  read: () => Promise<T>,
  intervalMs: number,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  let answer: { etag?: string; retryAfterMs?: number } | undefined;
  const poller = start((raw) => {
    if (answer) return;
    const body = (raw.parsedBody ?? parseJson(raw.bodyAsText)) as { etag?: string } | undefined;
    const retryAfter = Number(raw.headers.get("retry-after"));
    answer = {
      ...(body?.etag ? { etag: body.etag } : {}),
      ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  });
  await poller.submitted();
  const etag = answer?.etag;
  if (!etag) return await poller;
  // The first read no sooner than a poll would be: the operation may be done by then.
  await sleep(intervalMs);
  for (let reads = 0; reads < MAX_READS; reads++) {
    const current = await read();
    if (current.etag !== etag) break;
    if (current.provisioningState === "Succeeded") return current;
    if (current.provisioningState !== "Updating") break;
    await sleep(Math.max(intervalMs, answer?.retryAfterMs ?? 0));
  }
  return await poller;
}

function parseJson(text: string | null | undefined): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
