#!/usr/bin/env node
// portico-controller. Flags are described by --help.
//
// Two settings of the process itself suit a long-running controller whose live heap is small, and both take
// effect only when the process starts, so the controller starts itself again with them, as the same process
// (execve), before loading anything. Whatever the operator set already (in NODE_OPTIONS, on the command line, or
// in the environment) is kept.
//
// - V8 sizes the young generation for throughput: once a Node.js 24 process has allocated for a while it keeps
//   two semi-spaces of up to 64 MiB resident (make bench-memory: 128 MiB of new space in a 205 MiB heap). The
//   controller allocates in bursts of small, short-lived objects (a reconcile's intent, plan and requests);
//   semi-spaces of 4 MiB cost it a few more quick scavenges in a burst and save that memory for good.
// - glibc gives each thread that allocates (V8's GC and compiler workers, libuv's pool) an arena of its own, up to
//   eight per core, and memory freed in one arena is not reused by the others: the controller's native
//   allocations (TLS, HTTP/2 and socket buffers, parsed responses) spread over them and each keeps its high-water
//   mark. Two arenas are enough for them (make bench-memory: 40 MiB less resident, the same CPU).
const SEMI_SPACE_FLAG = "--max-semi-space-size";
const SEMI_SPACE_MIB = 4;
const ARENAS = "MALLOC_ARENA_MAX";
const ARENA_MAX = "2";

const semiSpaceGiven = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
  arg.startsWith(SEMI_SPACE_FLAG),
);
const arenasGiven = process.env[ARENAS] !== undefined;
if ((!semiSpaceGiven || !arenasGiven) && typeof process.execve === "function") {
  process.execve(
    process.execPath,
    [
      process.execPath,
      ...(semiSpaceGiven ? [] : [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MIB}`]),
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { ...process.env, [ARENAS]: process.env[ARENAS] ?? ARENA_MAX },
  );
}

const { main } = await import("./command.ts");
main().catch((err: unknown) => {
  console.error(`portico-controller: ${(err as Error).message}`);
  process.exit(1);
});
