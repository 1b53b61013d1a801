import type { V1Node } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { listPaged } from "./pagedList.ts";

const node = (name: string): V1Node => ({ metadata: { name, annotations: { big: "x" } } });

describe("paged lists", () => {
  test("follows continue tokens, trims each item, and keeps the resourceVersion of the pages", async () => {
    const asked: { limit: number; _continue?: string }[] = [];
    const pages: Record<
      string,
      { items: V1Node[]; metadata: { resourceVersion: string; _continue?: string } }
    > = {
      "": { items: [node("a"), node("b")], metadata: { resourceVersion: "7", _continue: "t1" } },
      t1: { items: [node("c"), node("d")], metadata: { resourceVersion: "7", _continue: "t2" } },
      t2: { items: [node("e")], metadata: { resourceVersion: "7" } },
    };
    const list = await listPaged(
      (opts) => {
        asked.push(opts);
        return Promise.resolve(pages[opts._continue ?? ""]!);
      },
      (n) => delete n.metadata!.annotations,
      2,
    );
    expect(asked).toEqual([{ limit: 2 }, { limit: 2, _continue: "t1" }, { limit: 2, _continue: "t2" }]);
    expect(list).toEqual({
      items: ["a", "b", "c", "d", "e"].map((name) => ({ metadata: { name } })),
      metadata: { resourceVersion: "7" },
    });
  });

  test("an apiserver that ignores the limit answers in one page", async () => {
    let calls = 0;
    const list = await listPaged(
      () => {
        calls++;
        return Promise.resolve({
          items: [node("a"), node("b"), node("c")],
          metadata: { resourceVersion: "9", _continue: "" },
        });
      },
      undefined,
      2,
    );
    expect(calls).toBe(1);
    expect(list.items).toHaveLength(3);
    expect(list.metadata.resourceVersion).toBe("9");
  });

  test("a page that fails fails the list (the informer lists again from the start)", async () => {
    await expect(
      listPaged((opts) =>
        opts._continue
          ? Promise.reject(new Error("HTTP-Code: 410 the continue token has expired"))
          : Promise.resolve({ items: [node("a")], metadata: { resourceVersion: "1", _continue: "t" } }),
      ),
    ).rejects.toThrow(/410/);
  });
});
