// Reading a Dockerfile and a .dockerignore the way the Docker builder does, for a test that cannot run one:
// the instructions and stages, and which files of the repository reach the build context.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions in order (continuation lines joined, comments dropped), split into stages. */
export function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) return;
    if (!pending) start = index + 1;
    pending += (pending ? " " : "") + line.replace(/\\$/, "").trim();
    if (line.endsWith("\\")) return;
    const [, keyword = "", args = ""] = /^(\S+)\s*(.*)$/.exec(pending) ?? [];
    instructions.push({ keyword: keyword.toUpperCase(), args, line: start });
    pending = "";
  });
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === "ARG" && stages.length === 0) {
      const [key = "", value = ""] = ins.args.split("=", 2);
      args.set(key, value);
    } else if (ins.keyword === "FROM") {
      const [image = "", as, name] = ins.args.split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}/g, (_, key: string) => args.get(key) ?? "");
      stages.push({ image: resolved, name: as?.toUpperCase() === "AS" ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(ins);
    }
  }
  return { args, stages };
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
}

export function parseCopy(ins: Instruction): Copy {
  const words = ins.args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith("--"));
  const paths = words.filter((w) => !w.startsWith("--"));
  const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
}

interface Rule {
  exclude: boolean;
  /** The cleaned pattern as written. */
  text: string;
  pattern: RegExp;
}

/** A .dockerignore pattern as a regular expression over slash-separated paths (`*`, `?`, `**`). */
function patternToRegExp(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      re += pattern[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += pattern[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

export function parseDockerignore(text: string): Rule[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const exclude = !l.startsWith("!");
      // The builder cleans each pattern as a path: no leading "/" or "./", no trailing "/".
      const path = (exclude ? l : l.slice(1)).replace(/^\.?\//, "").replace(/\/+$/, "");
      return { exclude, text: path, pattern: patternToRegExp(path) };
    });
}

/** As the builder decides: the last rule matching the path or one of its parent directories wins. */
export function inContext(rules: Rule[], path: string): boolean {
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let included = true;
  for (const rule of rules) if (prefixes.some((p) => rule.pattern.test(p))) included = !rule.exclude;
  return included;
}

/** Whether an exception rule could bring back a file below an excluded directory. */
function mayReinclude(rules: Rule[], dir: string): boolean {
  return rules.some((r) => !r.exclude && (r.text.startsWith(`${dir}/`) || /^[*?]/.test(r.text)));
}

/** Every file of `root` that reaches the build context. */
export function contextFiles(root: string, rules: Rule[]): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = relative(root, join(dir, entry.name));
      if (entry.isDirectory()) {
        if (inContext(rules, path) || mayReinclude(rules, path)) walk(join(dir, entry.name));
      } else if (inContext(rules, path)) files.push(path);
    }
  };
  walk(root);
  return files.sort();
}
