#!/usr/bin/env node
// portico-speaker: one per node (a DaemonSet with hostNetwork and CAP_NET_RAW). Flags are described by --help.
//
// V8 sizes the young generation for throughput: a Node.js 24 process that has allocated for a while keeps
// 64 MiB of new space resident, more than a third of an idle speaker's memory. The speaker allocates little
// and in small pieces, so a small young generation costs it a few extra quick collections and saves that
// memory on every node (make bench-speaker: idle RSS 174 -> 146 MiB). The flag only works on the command
// line, so the speaker starts itself again with it, as the same process (execve), before loading anything.
const FLAG = "--max-semi-space-size";
const SEMI_SPACE_MIB = 1;

const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
  arg.startsWith(FLAG),
);
if (!given && typeof process.execve === "function") {
  process.execve(
    process.execPath,
    [process.execPath, `${FLAG}=${SEMI_SPACE_MIB}`, ...process.execArgv, ...process.argv.slice(1)],
    process.env,
  );
}

const { main } = await import("./command.ts");
main().catch((err: unknown) => {
  console.error(`portico-speaker: ${(err as Error).message}`);
  process.exit(1);
});
