// Shared by the benchmarks: run one, print its figures with the command that reproduces them, keep them in
// bench/results/ so later changes can be compared.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function report(name: string, run: () => Promise<Record<string, unknown>>): Promise<void> {
  const sizes = Object.entries(process.env)
    .filter(([k]) => k.startsWith("BENCH_"))
    .map(([k, v]) => `${k}=${v} `)
    .join("");
  const command = `${sizes}make bench-${name}`;
  const os = await import("node:os");
  // The machine's load (1, 5 and 15 minutes) at the start and the end: figures from a busy machine compare only
  // as ratios with others of the same run.
  const load = () => os.loadavg().map((l) => +l.toFixed(2));
  const atStart = load();
  try {
    const figures = await run();
    const result = {
      name,
      date: new Date().toISOString(),
      command,
      machine: `${os.cpus().length} cores`,
      loadAverage: { atStart, atEnd: load() },
      ...figures,
    };
    const dir = join(import.meta.dirname, "results");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.json`), JSON.stringify(result, null, 2) + "\n");
    console.log(`\n${name} (${command})`);
    print(figures, "  ");
    process.exit(0);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}

function print(value: Record<string, unknown>, indent: string): void {
  for (const [k, v] of Object.entries(value)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      console.log(`${indent}${k}`);
      print(v as Record<string, unknown>, indent + "  ");
    } else if (Array.isArray(v) && v.some((e) => e && typeof e === "object")) {
      // Rows of a table (e.g. rounds of a run): one line each.
      console.log(`${indent}${k}`);
      for (const row of v as Record<string, unknown>[])
        console.log(
          `${indent}  ${Object.entries(row)
            .map(([rk, rv]) => `${rk} ${String(rv)}`)
            .join(", ")}`,
        );
    } else
      console.log(`${indent}${k.padEnd(28 - indent.length)} ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  }
}
