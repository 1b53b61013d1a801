// The controller built as the image's build does it (npm run build: tsc with tsconfig.build.json, then the bundle
// of rolldown.config.ts over tsc's controller/main.js), for benchmarks whose figures should be what users run:
// from the TypeScript sources Node.js holds about 28 MiB more (type stripping), and unbundled 14-17 MiB more.
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const ROOT = join(import.meta.dirname, "..");

/** Builds into .cache/<name>/dist (type checking left to make check) and returns the controller's entry point. */
export async function buildController(name: string, opts: { bundled?: boolean } = {}): Promise<string> {
  const out = join(ROOT, ".cache", name, "dist");
  await rm(out, { recursive: true, force: true });
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  await promisify(execFile)(
    process.execPath,
    [tsc, "-p", "tsconfig.build.json", "--noCheck", "--outDir", out],
    {
      cwd: ROOT,
    },
  );
  if (opts.bundled ?? true) {
    const rolldown = join(ROOT, "node_modules", ".bin", "rolldown");
    await promisify(execFile)(rolldown, ["-c", "rolldown.config.ts", "--dir", join(out, "controller")], {
      cwd: ROOT,
    });
  }
  return join(out, "controller", "main.js");
}
