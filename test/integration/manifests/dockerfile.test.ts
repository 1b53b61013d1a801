// No Docker engine runs here, so the image is checked by replaying its Dockerfile: the build context is what
// .dockerignore lets through, every COPY names something that exists there or in an earlier stage, the build
// stage's commands really build from that context alone (node_modules stands in for `npm ci`), and the
// runtime layout they produce starts both programs at the paths the manifests run, addon included.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";
import { describe, expect, test } from "../../harness/index.ts";
import { OVERLAYS, renderOverlay } from "../../harness/manifests.ts";
import { contextFiles, parseCopy, parseDockerfile, parseDockerignore, type Stage } from "./dockerfile.ts";
import { workloads } from "./pods.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..", "..");
const { stages } = parseDockerfile(readFileSync(join(root, "Dockerfile"), "utf8"));
const rules = parseDockerignore(readFileSync(join(root, ".dockerignore"), "utf8"));
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
};

const workdir = (stage: Stage) => stage.instructions.findLast((i) => i.keyword === "WORKDIR")?.args ?? "/";
const stageName = (stage: Stage, i: number) => stage.name ?? `stage-${i}`;

describe("Dockerfile", () => {
  test("the build context holds the sources and package files, and no tests, caches or local builds", () => {
    const files = contextFiles(root, rules);
    for (const needed of [
      "package.json",
      "package-lock.json",
      "tsconfig.build.json",
      "rolldown.config.ts",
      "controller/main.ts",
      "providers/aws/provider.ts",
      "speaker/main.ts",
      "speaker/native/build.sh",
      "speaker/native/packet_socket.c",
    ])
      expect(files, needed).toContain(needed);
    expect(files.filter((f) => /(^|\/)(test|\.cache|node_modules|dist|\.git)\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith(".test.ts") || f.includes("native/build/"))).toEqual([]);
  });

  test("every COPY names files in the build context or an earlier stage, on the Node.js the project needs", () => {
    const files = contextFiles(root, rules);
    const earlier: string[] = [];
    stages.forEach((stage, i) => {
      expect(stage.image).toMatch(/^node:24-/);
      for (const ins of stage.instructions.filter((x) => x.keyword === "COPY")) {
        const copy = parseCopy(ins);
        if (copy.from) {
          expect(earlier, `line ${ins.line}`).toContain(copy.from);
          continue;
        }
        for (const source of copy.sources) {
          const path = source.replace(/\/$/, "");
          expect(
            files.some((f) => f === path || f.startsWith(`${path}/`)),
            `line ${ins.line}: ${source}`,
          ).toBe(true);
        }
      }
      earlier.push(stageName(stage, i));
    });
    // The runtime runs as the user the controller's Deployment names, never as root by default.
    const user = stages.at(-1)!.instructions.findLast((x) => x.keyword === "USER")?.args;
    expect(user).toBe("65532:65532");
  });

  test("its stages build both programs from the context alone, and the manifests' commands start them", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "portico-image-"));
    onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
    const fsRoot = (name: string) => join(tmp, name);
    const inStage = (name: string, path: string) => join(fsRoot(name), path);
    const context = join(tmp, "context");
    for (const file of contextFiles(root, rules)) {
      mkdirSync(dirname(join(context, file)), { recursive: true });
      cpSync(join(root, file), join(context, file));
    }

    for (const [i, stage] of stages.entries()) {
      const name = stageName(stage, i);
      const cwd = inStage(name, workdir(stage));
      mkdirSync(cwd, { recursive: true });
      for (const ins of stage.instructions) {
        if (ins.keyword === "COPY") {
          const copy = parseCopy(ins);
          const target = join(cwd, copy.destination);
          for (const source of copy.sources) {
            const from = copy.from ? inStage(copy.from, source) : join(context, source);
            const into =
              copy.destination.endsWith("/") && !source.endsWith("/")
                ? join(target, source.split("/").pop()!)
                : target;
            mkdirSync(dirname(into), { recursive: true });
            cpSync(from, into, { recursive: true, verbatimSymlinks: true });
          }
        } else if (ins.keyword === "RUN") {
          const command = ins.args;
          if (command.startsWith("npm ci")) {
            // The registry's packages, as the lockfile pins them, are the ones installed here.
            symlinkSync(join(root, "node_modules"), join(cwd, "node_modules"));
          } else {
            const script = /^npm run (\S+)$/.exec(command)?.[1];
            const shell = script ? packageJson.scripts[script]! : command;
            await run("bash", ["-c", shell], {
              cwd,
              env: {
                ...process.env,
                PATH: `${join(root, "node_modules", ".bin")}:${dirname(process.execPath)}:${process.env.PATH}`,
              },
              maxBuffer: 16 << 20,
            }).catch((err: { stderr?: string; stdout?: string }) => {
              throw new Error(`line ${ins.line} (${command}) failed: ${err.stdout ?? ""}${err.stderr ?? ""}`);
            });
          }
        }
      }
    }

    const image = fsRoot(stageName(stages.at(-1)!, stages.length - 1));
    const commands = new Set<string>();
    for (const overlay of OVERLAYS)
      for (const w of workloads(await renderOverlay(overlay)))
        commands.add(JSON.stringify(w.container.command));
    expect(commands.size).toBe(2);
    for (const command of commands) {
      const [program, script] = JSON.parse(command) as [string, string];
      expect(program).toBe("node");
      const result = await run(process.execPath, [join(image, script), "--help"]).then(
        () => ({ code: 0, stderr: "" }),
        (err: { code: number; stderr: string }) => err,
      );
      // --help prints the usage and exits 2, after every module of the program has loaded.
      expect(result.code, script).toBe(2);
      expect(result.stderr).toMatch(/^portico-(controller|speaker): /);
    }

    // The controller's bundle is ASCII only (rolldown.config.ts): V8 keeps a script with a single other character
    // as two bytes per character, and the bundle's chunks are megabytes of source held for the process's life.
    const bundle = join(image, "app", "dist", "controller");
    const scripts = [
      "main.js",
      ...readdirSync(join(bundle, "bundle"))
        .filter((f) => f.endsWith(".js"))
        .map((f) => join("bundle", f)),
    ];
    expect(scripts.length).toBeGreaterThan(10);
    const notAscii = scripts.filter((f) => readFileSync(join(bundle, f)).some((byte) => byte > 0x7f));
    expect(notAscii).toEqual([]);

    // The speaker finds the addon where the image put it, and loads it.
    const { PORTICO_PACKET_ADDON: _unset, ...env } = process.env;
    const addon = join(image, "app", "dist", "speaker", "io", "addon.js");
    const { stdout } = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(addon)}); m.loadAddon(); console.log(m.addonPath());`,
      ],
      { env },
    );
    expect(stdout.trim()).toBe(
      join(image, "app", "dist", "speaker", "native", "build", "Release", "portico_packet.node"),
    );
  }, 180_000);
});
