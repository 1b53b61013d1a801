// docs/configuration.md, generated from what the programs read, so the reference cannot drift from them: the
// controller's and the speaker's --help text (the one place their flags are described), the table of azure.json
// keys the Azure provider parses, the environment variables they fall back to, and the Helm chart's values.yaml
// (its comments) with values.schema.json (its types). `make docs` writes it; test/unit/configReference.test.ts
// fails when it is stale or when a flag has no entry of its own.
import { readFileSync } from "node:fs";
import { dump, load } from "js-yaml";
import { USAGE as CONTROLLER_USAGE } from "../../controller/config.ts";
import { USAGE as PORTICOCTL_USAGE } from "../../controller/cli/porticoctl.ts";
import { AZURE_ENV_OVERRIDES, AZURE_KEYS } from "../../providers/azure/config.ts";
import { USAGE as SPEAKER_USAGE } from "../../speaker/config.ts";

const CHART = new URL("../../manifests/charts/portico/", import.meta.url);

/** One entry of a --help text: `--name VALUE   help`, or `env NAME   help`, with its continuation lines. */
export interface UsageEntry {
  readonly syntax: string;
  /** The flag's name without dashes; absent for an entry about environment variables. */
  readonly name?: string;
  readonly help: string;
  readonly env: readonly string[];
  readonly default?: string;
  /** The help without the parentheses that only give the environment variable and the default. */
  readonly meaning: string;
  /** The provider whose flag it is: the entry follows a heading `  NAME (--provider NAME):`. */
  readonly provider?: string;
}

/**
 * The entries of a --help text laid out as the controller's and the speaker's are: an entry starts two spaces in,
 * its help after a gap of two or more spaces (or on the next lines), and continues on lines indented further.
 */
export function usageEntries(usage: string): UsageEntry[] {
  const raw: { syntax: string; help: string[]; provider?: string }[] = [];
  let provider: string | undefined;
  for (const line of usage.split("\n").slice(1)) {
    const heading = /^ {2}([a-z0-9-]+) \(--provider \1\):$/.exec(line);
    if (heading) {
      provider = heading[1];
      continue;
    }
    const start = /^ {2}(\S.*?)(?:\s{2,}(\S.*))?$/.exec(line);
    if (start)
      raw.push({ syntax: start[1]!, help: start[2] ? [start[2]] : [], ...(provider ? { provider } : {}) });
    else if (line.trim() && raw.length) raw.at(-1)!.help.push(line.trim());
  }
  return raw.map(({ syntax, help: lines, provider: owner }) => {
    const help = lines.join(" ");
    const name = /^--([a-z0-9-]+)/.exec(syntax)?.[1];
    const env = [...help.matchAll(/\benv ([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);
    const given =
      /\bdefault:? ([^;)]+)/.exec(help)?.[1] ??
      /\((\w+), the default\)/.exec(help)?.[1] ??
      /^(\S+) \(default\)/.exec(help)?.[1];
    const fallback = given?.trim() ?? (/\brequired\)/.test(help) ? "required" : undefined);
    // Parentheses that say only "env X", "default Y" or "required" are the table's own columns.
    const meaning = help
      .replace(/\s*\(([^()]*)\)/g, (whole, inner: string) =>
        inner.split(/;\s*|,\s+/).every((part) => /^(env [A-Z][A-Z0-9_]*|default:? .+|required)$/.test(part))
          ? ""
          : whole,
      )
      .trim();
    return {
      syntax,
      ...(name ? { name } : {}),
      help,
      env,
      ...(fallback ? { default: fallback } : {}),
      meaning: owner ? `${owner}: ${meaning}` : meaning,
      ...(owner ? { provider: owner } : {}),
    };
  });
}

/** A table cell: pipes escaped, an empty cell shown as a dash. */
function cell(text: string | undefined): string {
  return text ? text.replaceAll("|", "\\|") : "—";
}

function code(text: string): string {
  return `\`${text}\``;
}

function table(head: readonly string[], rows: readonly (readonly (string | undefined)[])[]): string {
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

function flagTable(usage: string): string {
  const flags = usageEntries(usage).filter((e) => e.name);
  return table(
    ["Flag", "Environment", "Default", "Meaning"],
    flags.map((e) => [code(e.syntax), e.env.map(code).join(", "), e.default, e.meaning]),
  );
}

/** Variables read besides the flags' fallbacks and azure.json's overrides, each with what it changes. */
const OTHER_ENV: readonly (readonly [name: string, readBy: string, meaning: string])[] = [
  [
    "PORTICO_LOG_LEVEL",
    "controller, speaker",
    "The log level (pino's: trace, debug, info, warn, error, fatal).",
  ],
  ["HOSTNAME", "controller", "The first part of the controller's leader-election identity (the pod's name)."],
  [
    "KUBERNETES_SERVICE_HOST",
    "controller, speaker, porticoctl",
    "With KUBERNETES_SERVICE_PORT, where the apiserver is inside a cluster (set by the kubelet).",
  ],
  ["KUBERNETES_SERVICE_PORT", "controller, speaker, porticoctl", "See KUBERNETES_SERVICE_HOST."],
  ["AWS_REGION", "controller (aws)", "The AWS region when --aws-region is not given (read by the AWS SDK)."],
  ["AWS_ENDPOINT_URL", "controller (aws)", "Another endpoint for the AWS APIs (read by the AWS SDK)."],
  [
    "PORTICO_AWS_RATE_LIMIT",
    "controller (aws)",
    "`off`, `0` or `false` turns off the client-side limiter that keeps Portico under AWS's request limits.",
  ],
  [
    "PORTICO_AWS_RATE_SHARE",
    "controller (aws)",
    "Starts that limiter at this share (above 0, at most 1) of AWS's documented figures.",
  ],
  [
    "PORTICO_AZURE_RATE_LIMIT",
    "controller (azure)",
    "`off`, `0` or `false` turns off the client-side limiter under ARM's request limits (over azure.json's `rateLimit`).",
  ],
  [
    "PORTICO_AZURE_RATE_SHARE",
    "controller (azure)",
    "Starts that limiter at this share (above 0, at most 1) of Azure's documented figures (over azure.json's `rateLimit`).",
  ],
  [
    "NODE_OPTIONS",
    "controller, speaker",
    "Node.js flags; a heap flag given here (or on the command line) is kept instead of the program's own.",
  ],
  [
    "MALLOC_ARENA_MAX",
    "controller, speaker",
    "glibc's malloc arenas; when unset the programs restart themselves with 2, which holds less memory.",
  ],
  [
    "MALLOC_MMAP_THRESHOLD_",
    "controller",
    "glibc's threshold for mapping large blocks; when unset the controller restarts itself with 32768.",
  ],
  [
    "PORTICO_PACKET_ADDON",
    "speaker",
    "The path of the packet-socket addon (portico_packet.node); default: the one built in the source tree.",
  ],
  ["NO_COLOR", "porticoctl", "Set: no colours in porticoctl's output."],
];

export function environmentRows(): string[][] {
  const rows = new Map<string, { readBy: Set<string>; meaning: string[] }>();
  const add = (name: string, readBy: string, meaning: string) => {
    const row = rows.get(name) ?? { readBy: new Set<string>(), meaning: [] };
    row.readBy.add(readBy);
    if (!row.meaning.includes(meaning)) row.meaning.push(meaning);
    rows.set(name, row);
  };
  for (const [program, usage] of [
    ["controller", CONTROLLER_USAGE],
    ["speaker", SPEAKER_USAGE],
  ] as const) {
    for (const entry of usageEntries(usage)) {
      const flag = code(`--${entry.name}`);
      for (const env of entry.name ? entry.env : [])
        add(env, program, `Stands in for the ${program}'s ${flag} when that is not given.`);
      // An entry of its own ("env POD_NAME, POD_NAMESPACE"): its help is what the variables do.
      if (!entry.name)
        for (const env of entry.syntax.match(/[A-Z][A-Z0-9_]+/g) ?? [])
          add(env, program, `${entry.help[0]!.toUpperCase()}${entry.help.slice(1)}.`);
    }
  }
  for (const [env, key] of Object.entries(AZURE_ENV_OVERRIDES))
    add(env, "controller (azure)", `Overrides azure.json's ${code(key)}.`);
  for (const [env, readBy, meaning] of OTHER_ENV) for (const r of readBy.split(", ")) add(env, r, meaning);
  return [...rows]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, row]) => [code(name), [...row.readBy].join(", "), row.meaning.join(" ")]);
}

function azureTable(): string {
  const overriddenBy = new Map(Object.entries(AZURE_ENV_OVERRIDES).map(([env, key]) => [key as string, env]));
  return table(
    ["Key", "Type", "Required", "Environment", "Meaning"],
    Object.entries(AZURE_KEYS).map(([key, spec]) => [
      code(key),
      spec.type,
      "required" in spec ? "yes" : "no",
      overriddenBy.has(key) ? code(overriddenBy.get(key)!) : undefined,
      spec.meaning,
    ]),
  );
}

interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
}

function schemaType(node: SchemaNode | undefined): string | undefined {
  if (node?.enum) return node.enum.map((v) => code(v === "" ? '""' : String(v))).join(", ");
  if (node?.type) return [node.type].flat().join(" or ");
  return undefined;
}

/** Each key's `# --` comment in values.yaml, by its dotted path (keys in lists are not values of their own). */
function valueComments(text: string): Map<string, string> {
  const comments = new Map<string, string>();
  const stack: { indent: number; key: string }[] = [];
  let pending: string[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed) pending = [];
    else if (trimmed.startsWith("#")) pending.push(trimmed.replace(/^#\s?/, "").replace(/^-- /, ""));
    else {
      const key = /^(\s*)([A-Za-z0-9_.-]+):/.exec(line);
      if (key) {
        const indent = key[1]!.length;
        while (stack.length && stack.at(-1)!.indent >= indent) stack.pop();
        stack.push({ indent, key: key[2]! });
        if (pending.length) comments.set(stack.map((s) => s.key).join("."), pending.join(" "));
      }
      pending = [];
    }
  }
  return comments;
}

/**
 * A row for every value: a map whose keys have comments of their own is a row and then its keys; a map whose keys
 * have none (resources, nodeSelector) is one value, its default shown whole.
 */
export function helmRows(): string[][] {
  const text = readFileSync(new URL("values.yaml", CHART), "utf8");
  const values = load(text) as Record<string, unknown>;
  const schema = JSON.parse(readFileSync(new URL("values.schema.json", CHART), "utf8")) as SchemaNode;
  const comments = valueComments(text);
  const rows: string[][] = [];
  const walk = (object: Record<string, unknown>, prefix: string, node: SchemaNode | undefined) => {
    for (const [key, value] of Object.entries(object)) {
      const path = prefix + key;
      const child = node?.properties?.[key];
      const map = typeof value === "object" && value !== null && !Array.isArray(value);
      const described = map && Object.keys(value).some((k) => comments.has(`${path}.${k}`));
      const shown =
        described || value === undefined
          ? "—"
          : code(
              typeof value === "string"
                ? JSON.stringify(value)
                : dump(value, { flowLevel: 0, lineWidth: -1, quoteStyle: "double" }).trim(),
            );
      rows.push([code(path), schemaType(child) ?? "—", shown, comments.get(path) ?? "—"]);
      if (described) walk(value as Record<string, unknown>, `${path}.`, child);
    }
  };
  walk(values, "", schema);
  return rows;
}

export function configReference(): string {
  return `# Configuration reference

<!-- Generated by \`make docs\` (test/docs/configReference.ts); do not edit. -->

Everything Portico can be told, as the code reads it: the controller's and the speaker's flags (from their
\`--help\`), the keys of azure.json, the environment variables, and the Helm chart's values (from values.yaml and
values.schema.json). The page is generated by \`make docs\` from the code, and a unit test fails when it is stale.

## Controller flags

\`node dist/controller/main.js --help\`. In the chart, \`controller.extraArgs\` adds flags; the ones it sets from
its values are refused there.

${flagTable(CONTROLLER_USAGE)}

## Speaker flags

\`node dist/speaker/main.js --help\`; only with provider metal. In the chart, \`speaker.extraArgs\` adds flags.

${flagTable(SPEAKER_USAGE)}

## porticoctl

\`porticoctl --help\`:

\`\`\`text
${PORTICOCTL_USAGE}
\`\`\`

## azure.json

The controller's \`--azure-config\` file, in cloud-provider-azure's format: the keys Portico reads. Other keys are
ignored. The environment variables named override the file's value.

${azureTable()}

## Environment variables

${table(["Variable", "Read by", "Meaning"], environmentRows())}

## Helm values

\`manifests/charts/portico/values.yaml\`, checked by \`values.schema.json\` (an unknown key fails \`helm install\`).

${table(["Value", "Type", "Default", "Meaning"], helmRows())}
`;
}

if (import.meta.main) process.stdout.write(configReference());
