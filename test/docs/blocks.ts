// The shell and YAML blocks of the README and docs/, and how the documentation test runs each. A block says how
// in an HTML comment on the nearest non-empty line above its fence, so the reader sees the reason too:
//   <!-- doc-test: run -->             commands run as written against the local cluster (Portico in portico-system)
//   <!-- doc-test: apply -->           a manifest applied to the local cluster, then deleted
//   <!-- doc-test: dry-run: <why> -->  commands that would change what the cluster runs (installing Portico again, a
//                                      cloud's install): run with the apiserver checking but not persisting them
//   <!-- doc-test: skip: <why> -->     not run (a real cloud account, a container engine, the test suite itself)
//   <!-- doc-test: file: <path> -->    a file the reader writes (their own kustomization.yaml), written at <path>
//                                      in the test's work directory for the page's commands to use
// A block with no marker, or a skip or dry-run with no reason, fails the unit test, so none is left out silently.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export type Mode =
  | { kind: "run" }
  | { kind: "apply" }
  | { kind: "dry-run"; why: string }
  | { kind: "skip"; why: string }
  | { kind: "file"; path: string };

export interface DocBlock {
  /** The file, relative to the repository. */
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  lang: string;
  body: string;
  /** Undefined when the block has no marker, or a malformed one (`problem` says which). */
  mode?: Mode;
  problem?: string;
}

/** Languages whose blocks are commands or manifests, and must say how they are tested. */
export const TESTED_LANGUAGES = new Set(["sh", "bash", "shell", "console", "yaml", "yml", "json"]);
export const SHELL = new Set(["sh", "bash", "shell", "console"]);

const MARKER = /^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;

export function parseMarker(text: string): { mode?: Mode; problem?: string } {
  const [kind, ...rest] = text.split(":");
  const why = rest.join(":").trim();
  switch (kind!.trim()) {
    case "run":
    case "apply":
      return rest.length
        ? { problem: `"${kind}" takes no reason` }
        : { mode: { kind: kind!.trim() as "run" | "apply" } };
    case "dry-run":
    case "skip":
      return why
        ? { mode: { kind: kind!.trim() as "dry-run" | "skip", why } }
        : { problem: `"${kind!.trim()}" needs a reason: <!-- doc-test: ${kind!.trim()}: why -->` };
    case "file":
      // Inside the work directory, where the commands that use it run; never one of Portico's own files, which
      // a reader would have to edit in place and merge again at every update.
      if (!/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[\w./-]+$/.test(why))
        return {
          problem: `"file" needs a relative path in the work directory: <!-- doc-test: file: dir/name -->`,
        };
      if (/^(\.\/)?manifests\//.test(why))
        return { problem: `"file: ${why}" edits Portico's manifests: write a file of the reader's own` };
      return { mode: { kind: "file", path: why } };
    default:
      return {
        problem: `unknown doc-test marker "${text}" (run, apply, dry-run: why, skip: why, file: path)`,
      };
  }
}

/** Every fenced block of a markdown text, with the marker above it. */
export function blocksOf(file: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence!)) end++;
    const body = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l.trimStart()))
      .join("\n");
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const marker = above >= 0 ? MARKER.exec(lines[above]!) : null;
    const block: DocBlock = { file, line: i + 1, lang: lang!.toLowerCase(), body };
    if (marker) Object.assign(block, parseMarker(marker[1]!));
    else if (TESTED_LANGUAGES.has(block.lang))
      block.problem = "no <!-- doc-test: … --> marker above the block";
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The documentation users read: the README and every page under docs/. */
export function documentationFiles(root: string): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(root, "docs", f));
  return [join(root, "README.md"), ...docs.sort()];
}

export function documentationBlocks(root: string): DocBlock[] {
  return documentationFiles(root).flatMap((path) =>
    blocksOf(relative(root, path), readFileSync(path, "utf8")),
  );
}

/**
 * A shell block as the test runs it: continuation lines joined, comments dropped, placeholders replaced with the
 * local cluster's values; in dry-run mode each command that changes the cluster asks the apiserver to check it
 * without persisting it (`kubectl create` is checked by kubectl alone: its objects exist on the local cluster, where
 * a server-side dry run of a create answers AlreadyExists).
 */
export function commandsOf(body: string, values: Record<string, string>, dryRun: boolean): string[] {
  const joined = body.replace(/\\\n\s*/g, "");
  return joined
    .split("\n")
    .map((l) => withoutComment(l).trim())
    .filter((l) => l !== "")
    .map((l) => {
      const replaced = withValues(l, values);
      return dryRun ? dryRunOf(replaced) : replaced;
    });
}

/** A `file:` block's text as the test writes it: the placeholders given the local cluster's values. */
export function fileOf(body: string, values: Record<string, string>): string {
  return body
    .split("\n")
    .map((l) => withValues(l, values))
    .join("\n")
    .concat("\n");
}

function withValues(line: string, values: Record<string, string>): string {
  return line.replace(/<[^<>\n]+>/g, (p) => {
    const value = values[p];
    if (value === undefined) throw new Error(`no value for the placeholder ${p} in "${line}"`);
    return value;
  });
}

/** The program and its subcommand, past global flags such as `kubectl -n <namespace> create`. */
function toolAndVerb(command: string): [string, string] {
  const [tool, ...rest] = command.trim().split(/\s+/);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith("-")) return [tool!, word];
    if (!word.includes("=") && ["-n", "--namespace", "--kubeconfig", "--context"].includes(word)) i++;
  }
  return [tool!, ""];
}

/** The line up to a `#` that starts a shell comment (at the start or after a space, outside quotes). */
function withoutComment(line: string): string {
  let quote = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

function dryRunOf(command: string): string {
  return command
    .split(/(\s&&\s)/)
    .map((part) => {
      const [tool, verb] = toolAndVerb(part);
      if (tool === "kubectl" && verb === "create") return `${part} --dry-run=client`;
      if (tool === "kubectl" && ["apply", "delete", "label", "annotate"].includes(verb))
        return `${part} --dry-run=server`;
      // The local cluster's own installation holds objects of the same names, which helm would refuse to take
      // over; in a dry run it takes nothing, so the check is skipped.
      if (tool === "helm" && (verb === "install" || verb === "upgrade"))
        return `${part} --dry-run=server --take-ownership`;
      return part;
    })
    .join("");
}
