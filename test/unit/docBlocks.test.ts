// The documentation's blocks: how they are found and rewritten for the documentation test (test/e2e/
// documentation.test.ts runs them on the local cluster), and that every shell and YAML block of the README and
// docs/ says how it is tested, so a new one cannot go untested without a stated reason.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import {
  blocksOf,
  commandsOf,
  documentationBlocks,
  documentationFiles,
  fileOf,
  parseMarker,
} from "../docs/blocks.ts";

const ROOT = join(import.meta.dirname, "..", "..");

describe("blocksOf", () => {
  test("finds fenced blocks with their language, line, body and the marker above them", () => {
    const text = [
      "# Title",
      "<!-- doc-test: run -->",
      "",
      "```sh",
      "kubectl get pods",
      "```",
      "text",
      "   <!-- doc-test: skip: needs a cloud -->",
      "   ```yaml",
      "   kind: Service",
      "     name: x",
      "   ```",
      "```text",
      "output",
      "```",
    ].join("\n");
    expect(blocksOf("a.md", text)).toEqual([
      { file: "a.md", line: 4, lang: "sh", body: "kubectl get pods", mode: { kind: "run" } },
      {
        file: "a.md",
        line: 9,
        lang: "yaml",
        body: "kind: Service\n  name: x",
        mode: { kind: "skip", why: "needs a cloud" },
      },
      { file: "a.md", line: 13, lang: "text", body: "output" },
    ]);
  });

  test("a shell or YAML block without a marker is a problem; an output block is not", () => {
    const [sh, out] = blocksOf("a.md", "para\n\n```sh\nls\n```\n\n```text\nx\n```\n");
    expect(sh!.problem).toMatch(/no <!-- doc-test/);
    expect(out!.problem).toBeUndefined();
  });

  test("a marker two paragraphs up does not count", () => {
    const [b] = blocksOf("a.md", "<!-- doc-test: run -->\n\nprose\n\n```sh\nls\n```\n");
    expect(b!.problem).toMatch(/no <!-- doc-test/);
  });
});

describe("parseMarker", () => {
  test("skip and dry-run need a reason, run and apply take none, others are unknown", () => {
    expect(parseMarker("skip").problem).toMatch(/needs a reason/);
    expect(parseMarker("dry-run:  ").problem).toMatch(/needs a reason/);
    expect(parseMarker("dry-run: a: b")).toEqual({ mode: { kind: "dry-run", why: "a: b" } });
    expect(parseMarker("run: now").problem).toMatch(/takes no reason/);
    expect(parseMarker("apply")).toEqual({ mode: { kind: "apply" } });
    expect(parseMarker("maybe").problem).toMatch(/unknown/);
  });

  test("file takes a path in the work directory, never one of Portico's manifests", () => {
    expect(parseMarker("file: my-portico/kustomization.yaml")).toEqual({
      mode: { kind: "file", path: "my-portico/kustomization.yaml" },
    });
    expect(parseMarker("file:").problem).toMatch(/relative path/);
    expect(parseMarker("file: /etc/passwd").problem).toMatch(/relative path/);
    expect(parseMarker("file: ../outside.yaml").problem).toMatch(/relative path/);
    expect(parseMarker("file: a/../../outside.yaml").problem).toMatch(/relative path/);
    expect(parseMarker("file: manifests/overlays/metal/kustomization.yaml").problem).toMatch(
      /edits Portico's manifests/,
    );
    expect(parseMarker("file: ./manifests/overlays/eks/controller.yaml").problem).toMatch(
      /edits Portico's manifests/,
    );
  });
});

describe("fileOf", () => {
  test("keeps the text as written, indentation and comments included, with the placeholders' values", () => {
    const body =
      "images:\n  - name: portico # every container\n    newName: <registry>/portico\n    newTag: <tag>";
    expect(fileOf(body, { "<registry>": "localhost", "<tag>": "abc" })).toBe(
      "images:\n  - name: portico # every container\n    newName: localhost/portico\n    newTag: abc\n",
    );
    expect(() => fileOf("x: <unknown>", {})).toThrow(/<unknown>/);
  });
});

describe("commandsOf", () => {
  const values = { "<registry>": "localhost", "<tag>": "abc" };

  test("joins continuation lines, drops comments, replaces placeholders", () => {
    expect(
      commandsOf(
        '# install\nhelm install p chart \\\n  --set image.repository=<registry>/portico --set-string image.tag=<tag>  # the image\nkubectl create secret generic s --from-literal=secret="$(openssl rand -base64 32)"\n',
        values,
        false,
      ),
    ).toEqual([
      "helm install p chart --set image.repository=localhost/portico --set-string image.tag=abc",
      'kubectl create secret generic s --from-literal=secret="$(openssl rand -base64 32)"',
    ]);
  });

  test("a placeholder without a value is an error naming it", () => {
    expect(() => commandsOf("kubectl get svc <name>", values, false)).toThrow(/<name>/);
  });

  test("dry-run asks the apiserver to check changes without keeping them, and kubectl alone for creates", () => {
    expect(
      commandsOf(
        "kubectl create namespace x\nkubectl label namespace x a=b --overwrite\nkubectl -n ns create secret generic s\ncd d && kustomize edit set image portico=<registry>/portico:<tag> && cd -\nkubectl apply -k d\nhelm install p c\nhelm upgrade p c\nkubectl get pods",
        values,
        true,
      ),
    ).toEqual([
      "kubectl create namespace x --dry-run=client",
      "kubectl label namespace x a=b --overwrite --dry-run=server",
      "kubectl -n ns create secret generic s --dry-run=client",
      "cd d && kustomize edit set image portico=localhost/portico:abc && cd -",
      "kubectl apply -k d --dry-run=server",
      "helm install p c --dry-run=server --take-ownership",
      "helm upgrade p c --dry-run=server --take-ownership",
      "kubectl get pods",
    ]);
  });
});

test("every shell, YAML and JSON block of the README and docs/ says how the documentation test treats it", () => {
  const problems = documentationBlocks(ROOT)
    .filter((b) => b.problem)
    .map((b) => `${b.file}:${b.line} (${b.lang || "no language"}): ${b.problem}`);
  expect(problems).toEqual([]);
});

test("every fenced block names its language, so none escapes the check above", () => {
  const bare = documentationBlocks(ROOT)
    .filter((b) => b.lang === "")
    .map((b) => `${b.file}:${b.line}`);
  expect(bare, "give these blocks a language (text for output)").toEqual([]);
});

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

test("every link of the README and docs/ to a file of the repository, and to a heading, leads somewhere", () => {
  const broken: string[] = [];
  for (const path of documentationFiles(ROOT)) {
    const text = readFileSync(path, "utf8");
    for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const file = target ? resolve(dirname(path), target) : path;
      const where = `${relative(ROOT, path)}: (${target}${anchor ? `#${anchor}` : ""})`;
      if (!existsSync(file)) {
        broken.push(where);
        continue;
      }
      if (anchor && file.endsWith(".md")) {
        const headings = [...readFileSync(file, "utf8").matchAll(/^#+ (.*)$/gm)].map((m) => anchorOf(m[1]!));
        if (!headings.includes(anchor)) broken.push(`${where}: no such heading`);
      }
    }
  }
  expect(broken).toEqual([]);
});
