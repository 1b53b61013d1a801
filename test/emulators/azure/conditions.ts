// ARM's optimistic concurrency: If-Match (the write applies only to the version the client read) and
// If-None-Match: * (create only). A failed condition is 412 PreconditionFailed; a request without these headers
// is unconditional, and the last writer wins.
import type { IncomingHttpHeaders } from "node:http";
import { preconditionFailed } from "./errors.ts";

/** Etags compare by their opaque value: `W/"x"`, `"x"` and `x` name the same version. */
const opaque = (etag: string): string =>
  etag
    .trim()
    .replace(/^W\//i, "")
    .replace(/^"(.*)"$/, "$1");

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(",") : v;
};

const matches = (list: string, etag: string): boolean =>
  list.split(",").some((candidate) => candidate.trim() === "*" || opaque(candidate) === opaque(etag));

/** Throws 412 unless the request's conditional headers hold for a resource at `currentEtag` (undefined: absent). */
export function checkConditions(
  headers: IncomingHttpHeaders,
  currentEtag: string | undefined,
  id: string,
): void {
  const ifMatch = header(headers, "if-match");
  if (ifMatch !== undefined && (currentEtag === undefined || !matches(ifMatch, currentEtag)))
    throw preconditionFailed("If-Match", ifMatch, id);
  const ifNoneMatch = header(headers, "if-none-match");
  if (ifNoneMatch !== undefined && currentEtag !== undefined && matches(ifNoneMatch, currentEtag))
    throw preconditionFailed("If-None-Match", ifNoneMatch, id);
}
