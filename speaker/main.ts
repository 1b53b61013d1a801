#!/usr/bin/env node
// portico-speaker: one per node (a DaemonSet with hostNetwork and CAP_NET_RAW). Flags are described by --help.
//
// A speaker runs on every node, so its memory counts once per node; two settings that only work from the
// start of a process cut it, so the speaker starts itself again with them, as the same process (execve), before
// loading anything:
// - V8 sizes the young generation for throughput: a Node.js 24 process that has allocated for a while keeps
//   64 MiB of new space resident. The speaker allocates little and in small pieces, so a small young generation
//   costs it a few extra quick collections and saves that memory (make bench-speaker: idle RSS 174 -> 146 MiB).
// - glibc gives each thread that allocates (V8's and libuv's helpers) its own malloc arena, and keeps what was
//   freed in each; two arenas hold less of it after the lists of a big cluster were parsed (at 1000 Services,
//   5-10 MiB less per speaker).
// An operator who sets the young generation's size (on the command line or in NODE_OPTIONS) chooses both.
const FLAG = "--max-semi-space-size";
const SEMI_SPACE_MIB = 1;
const ARENAS = "2";

const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
  arg.startsWith(FLAG),
);
if (!given && typeof process.execve === "function") {
  process.execve(
    process.execPath,
    [process.execPath, `${FLAG}=${SEMI_SPACE_MIB}`, ...process.execArgv, ...process.argv.slice(1)],
    { MALLOC_ARENA_MAX: ARENAS, ...process.env },
  );
}

const { main } = await import("./command.ts");
main().catch((err: unknown) => {
  console.error(`portico-speaker: ${(err as Error).message}`);
  process.exit(1);
});
