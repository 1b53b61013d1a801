// Lists for the informers a page at a time, trimming each page before asking for the next. A whole list is one
// response body, parsed and then copied into client-node's model objects before anything can trim it: for a
// thousand kubelet-sized Nodes or five thousand Services tens of megabytes at once, which V8 keeps as heap long
// after they are garbage. Pages of 500, as client-go's reflector asks for, keep that peak to one page. The
// apiserver serves every page from the snapshot of the first, so the pages together are exactly one list.
import type { KubernetesObject, V1ListMeta } from "@kubernetes/client-node";

export const PAGE_SIZE = 500;

export interface Page<T> {
  items: T[];
  metadata?: V1ListMeta;
}

/** What ListWatch wants of a list: every item, and the resourceVersion to watch from. */
export async function listPaged<T extends KubernetesObject>(
  page: (opts: { limit: number; _continue?: string }) => Promise<Page<T>>,
  trim?: (obj: T) => void,
  pageSize = PAGE_SIZE,
): Promise<{ items: T[]; metadata: { resourceVersion?: string } }> {
  const items: T[] = [];
  let next: string | undefined;
  let resourceVersion: string | undefined;
  do {
    const list = await page({ limit: pageSize, ...(next ? { _continue: next } : {}) });
    for (const item of list.items) {
      trim?.(item);
      items.push(item);
    }
    resourceVersion = list.metadata?.resourceVersion;
    next = list.metadata?._continue || undefined;
  } while (next);
  return { items, metadata: resourceVersion === undefined ? {} : { resourceVersion } };
}
