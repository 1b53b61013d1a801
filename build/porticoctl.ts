// Builds porticoctl as one executable a user copies onto their PATH and runs with nothing else installed: a
// Node.js single executable application (https://nodejs.org/api/single-executable-applications.html), that is a
// copy of the Node.js binary running this script with porticoctl's code injected into it. `make build` runs it.
//
//   dist/bin/kubectl-portico   the executable; on the PATH, kubectl runs it as `kubectl portico …`
//   dist/bin/porticoctl        a link to it: the same program under the name the documentation uses
//
// A single executable application runs one CommonJS script and can load nothing from disk but Node's own
// modules, so porticoctl is first bundled with everything it imports: the Kubernetes client, every provider and
// its cloud SDK (which porticoctl loads only when a Service needs it, by dynamic import; here those imports are
// inlined). The script carries its version (package.json's, the controller's and the chart's appVersion), and
// `import.meta.main` is true in it, so porticoctl.ts runs its command line as when started with node.
// The executable is for the platform and architecture it is built on. Usage: node build/porticoctl.ts
import { execFile } from "node:child_process";
import { copyFile, mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "rolldown";

const ROOT = join(import.meta.dirname, "..");
/** Node.js's own marker in its binary, which postject flips to say a blob is injected (the documented value). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const run = promisify(execFile);

export interface Built {
  /** dist/bin/kubectl-portico */
  executable: string;
  /** dist/bin/porticoctl, a link to it */
  link: string;
}

/** `out` receives the executable and its link, `work` the bundle and blob they are made from (emptied first). */
export async function buildPorticoctl(
  out = join(ROOT, "dist", "bin"),
  work = join(ROOT, "dist", "porticoctl"),
): Promise<Built> {
  // Official Node.js builds carry the fuse; a distribution's build linked to a shared libnode may not.
  if (!(await readFile(process.execPath)).includes(`${SEA_FUSE}:0`))
    throw new Error(
      `the Node.js at ${process.execPath} cannot become a single executable (it has no ${SEA_FUSE}): ` +
        "run this with the official Node.js 24 build, which test/env/node.sh installs",
    );
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  await mkdir(out, { recursive: true });
  const script = join(work, "porticoctl.cjs");
  await build({
    input: join(ROOT, "controller", "cli", "porticoctl.ts"),
    platform: "node",
    // The bundle is the executable's main script, not a module of the program it runs in.
    transform: { define: { "import.meta.main": "true" } },
    logLevel: "warn",
    output: {
      file: script,
      format: "cjs",
      codeSplitting: false,
      minify: true,
      keepNames: true,
      comments: false,
    },
  });
  const config = join(work, "sea-config.json");
  const blob = join(work, "porticoctl.blob");
  await writeFile(
    config,
    JSON.stringify({
      main: script,
      output: blob,
      disableExperimentalSEAWarning: true,
      // V8's compiled code goes in with the script: porticoctl starts without compiling megabytes of it.
      useCodeCache: true,
    }),
  );
  await run(process.execPath, ["--experimental-sea-config", config], { cwd: work });

  const executable = join(out, "kubectl-portico");
  const link = join(out, "porticoctl");
  const partial = `${executable}.partial`;
  await copyFile(process.execPath, partial);
  await run(
    process.execPath,
    [
      join(ROOT, "node_modules", "postject", "dist", "cli.js"),
      partial,
      "NODE_SEA_BLOB",
      blob,
      "--sentinel-fuse",
      SEA_FUSE,
    ],
    { maxBuffer: 16 << 20 },
  );
  // In place at once: a copy still being written is never found on the PATH.
  await rename(partial, executable);
  await rm(link, { force: true });
  await symlink("kubectl-portico", link);
  return { executable, link };
}

if (import.meta.main) {
  buildPorticoctl().then(
    ({ executable, link }) => console.log(`porticoctl: built ${executable} (and ${link})`),
    (err: unknown) => {
      console.error(`porticoctl: the build failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
