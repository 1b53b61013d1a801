// `make bench-memory-floor`: what the controller's memory is made of before it does any work. Each layer is bundled
// as the image's controller is (rolldown.config.ts's settings) and loaded alone in a Node.js process with the flags
// the controller gives itself (controller/main.ts), then collected, and its resident memory read from /proc: Node.js
// alone, with TLS, with the Kubernetes client's configuration and HTTP stack, with what the controller uses of
// @kubernetes/client-node (and what that brings), the controller's own code with the bare-metal provider, and with
// the AWS or the Azure provider instead. What a controller serving Services holds comes on top (make bench-memory,
// bench-aws, bench-azure).
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "rolldown";
import config from "../rolldown.config.ts";
import { report } from "./report.ts";

const ROOT = join(import.meta.dirname, "..");
const OUT = join(ROOT, ".cache", "bench-memory-floor");
const MIB = 2 ** 20;
const RUNS = Number(process.env.BENCH_FLOOR_RUNS ?? 3);
/** How the image's bundle is written (minified, names kept, ASCII only, no comments): each layer the same way. */
const image = Array.isArray(config.output) ? config.output[0]! : config.output!;
const imageOutput = {
  format: image.format,
  minify: image.minify,
  keepNames: image.keepNames,
  charset: image.charset,
  comments: image.comments,
};

/** What each layer loads, as the lines of its entry module. */
const LAYERS: Record<string, string[]> = {
  "Node.js alone": [],
  // What any client of the apiserver needs: TLS, with a context made (OpenSSL's tables, the root certificates).
  "Node.js with TLS": [
    `import * as https from "node:https";`,
    `import { createSecureContext } from "node:tls";`,
    `globalThis.loaded = [https, createSecureContext({})];`,
  ],
  // The client's configuration and its HTTP stack (its own copy of undici, which every request goes through).
  "@kubernetes/client-node's KubeConfig": [
    `import { KubeConfig } from "@kubernetes/client-node";`,
    `globalThis.loaded = [KubeConfig];`,
  ],
  // What the controller uses of it (the bundle leaves the rest out, as the controller's does).
  "@kubernetes/client-node": [
    `import { ApiException, CoordinationV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig,`,
    `  ListWatch, PatchStrategy, Watch, setHeaderOptions } from "@kubernetes/client-node";`,
    `globalThis.loaded = [ApiException, CoordinationV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api,`,
    `  KubeConfig, ListWatch, PatchStrategy, Watch, setHeaderOptions];`,
  ],
  "controller, bare metal": [
    `import * as command from "${ROOT}/controller/command.ts";`,
    `import * as metal from "${ROOT}/providers/metal/provider.ts";`,
    `import * as inventory from "${ROOT}/providers/metal/inventory.ts";`,
    `import * as poolStatus from "${ROOT}/providers/metal/poolStatus.ts";`,
    `globalThis.loaded = [command, metal, inventory, poolStatus];`,
  ],
  "controller, AWS": [
    `import * as command from "${ROOT}/controller/command.ts";`,
    `import * as aws from "${ROOT}/providers/aws/provider.ts";`,
    `globalThis.loaded = [command, aws];`,
  ],
  "controller, Azure": [
    `import * as command from "${ROOT}/controller/command.ts";`,
    `import * as azure from "${ROOT}/providers/azure/provider.ts";`,
    `globalThis.loaded = [command, azure];`,
  ],
};

/** Loads the bundle, collects everything it can, waits for the process to settle, and says what is resident. */
const MEASURE = `
const bundle = process.argv[2];
if (bundle) await import(bundle);
for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 500)); }
const status = (await import("node:fs")).readFileSync("/proc/self/status", "utf8");
const kib = (f) => Number(new RegExp(f + ":\\\\s+(\\\\d+)").exec(status)[1]);
const heap = process.memoryUsage();
console.log(JSON.stringify({ rss: kib("VmRSS"), anon: kib("RssAnon"), file: kib("RssFile"),
  heapTotal: heap.heapTotal / 1024, heapUsed: heap.heapUsed / 1024 }));
`;

/** The V8 flags and malloc settings controller/main.ts starts the controller with. */
async function controllerSettings(): Promise<{ flags: string[]; environment: Record<string, string> }> {
  const main = await readFile(join(ROOT, "controller", "main.ts"), "utf8");
  const flags = [...main.matchAll(/\["(--[a-z-]+)", "([^"]+)"\]/g)].map((m) => `${m[1]}=${m[2]}`);
  const environment = Object.fromEntries(
    [...main.matchAll(/(MALLOC_[A-Z_]+): "(\d+)"/g)].map((m) => [m[1]!, m[2]!]),
  );
  if (!flags.length || !Object.keys(environment).length)
    throw new Error("controller/main.ts no longer names its settings as this benchmark reads them");
  return { flags, environment };
}

export async function benchMemoryFloor(): Promise<Record<string, unknown>> {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const measure = join(OUT, "measure.mjs");
  await writeFile(measure, MEASURE);
  const { flags, environment } = await controllerSettings();
  const layers: Record<string, unknown>[] = [];
  for (const [name, lines] of Object.entries(LAYERS)) {
    let bundle = "";
    if (lines.length) {
      const dir = join(OUT, String(layers.length));
      const entry = join(dir, "entry.ts");
      await mkdir(dir, { recursive: true });
      await writeFile(entry, lines.join("\n") + "\n");
      await build({
        input: entry,
        cwd: ROOT,
        platform: "node",
        logLevel: "silent",
        output: { ...imageOutput, dir: join(dir, "out") },
      });
      bundle = join(dir, "out", "entry.js");
    }
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [...flags, "--expose-gc", measure, ...(bundle ? [bundle] : [])],
        { env: { ...process.env, ...environment } },
      );
      runs.push(JSON.parse(stdout) as Record<string, number>);
    }
    // The run with the least resident memory: what the layer needs, the noise of the others left out.
    const best = runs.sort((a, b) => a.rss! - b.rss!)[0]!;
    const mib = (kib: number) => Math.round((kib * 1024) / MIB);
    layers.push({
      layer: name,
      rssMiB: mib(best.rss!),
      anonymousMiB: mib(best.anon!),
      filesMiB: mib(best.file!),
      heapUsedMiB: mib(best.heapUsed!),
      rssOfEachRunMiB: runs.map((r) => mib(r.rss!)).sort((a, b) => a - b),
    });
  }
  return { nodeVersion: process.version, nodeFlags: flags, environment, runsPerLayer: RUNS, layers };
}

if (import.meta.main) await report("memory-floor", benchMemoryFloor);
