#!/usr/bin/env node
// portico-controller. Flags are described by --help.
//
// A few settings of the process itself suit a long-running controller whose live heap is small (make
// bench-memory: about 60 MiB at 2500 Services, most of it the code of the modules it loads). They take effect
// only when the process starts, so the controller starts itself again with them, as the same process (execve),
// before loading anything. Whatever the operator set already (on the command line, in NODE_OPTIONS, or in the
// environment) is kept.
//
// - V8 sizes the young generation for throughput: once a Node.js 24 process has allocated for a while it keeps
//   two semi-spaces of up to 64 MiB resident (128 MiB of new space in a 205 MiB heap, measured). The controller
//   allocates in bursts of small, short-lived objects (a reconcile's intent, plan and requests); semi-spaces of
//   4 MiB cost it a few more quick scavenges in a burst and save that memory for good.
// - After each full collection V8 lets the old generation grow by a factor of up to 2 or more before the next
//   one, and keeps what it grew: a third to a half of the old space was free once settled. Growing by 20% costs
//   more full collections in a burst of reconciles (24 s of CPU against 20-22 s for 2500 Services) and keeps
//   the heap closer to what is live (24 MiB less resident).
// - glibc gives each thread that allocates (V8's GC and compiler workers, libuv's pool) an arena of its own, up to
//   eight per core, and memory freed in one arena is not reused by the others: the controller's native
//   allocations (TLS, HTTP/2 and socket buffers) spread over them and each keeps its high-water mark. Two arenas
//   are enough. Blocks of 32 KiB and more are mapped and unmapped on their own rather than kept in an arena, whose
//   threshold glibc would otherwise raise after the first large one was freed: V8 parses and compiles in zones of
//   32 KiB segments, tens of MiB of them while the cloud SDKs load, and an arena keeps what they freed (make
//   bench-memory-floor: the AWS controller 134 MiB loaded with a 128 KiB threshold, 111 with 32 KiB; bare metal
//   89 and 77).
const V8_FLAGS: [flag: string, value: string][] = [
  ["--max-semi-space-size", "4"],
  ["--heap-growing-percent", "20"],
];
const ENVIRONMENT: Record<string, string> = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "32768" };

const nodeArgs = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
const missingFlags = V8_FLAGS.filter(([flag]) => !nodeArgs.some((arg) => arg.startsWith(flag)));
const missingEnv = Object.entries(ENVIRONMENT).filter(([name]) => process.env[name] === undefined);
if ((missingFlags.length || missingEnv.length) && typeof process.execve === "function") {
  process.execve(
    process.execPath,
    [
      process.execPath,
      ...missingFlags.map(([flag, value]) => `${flag}=${value}`),
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { ...process.env, ...Object.fromEntries(missingEnv) },
  );
}

const { main } = await import("./command.ts");
main().catch((err: unknown) => {
  console.error(`portico-controller: ${(err as Error).message}`);
  process.exit(1);
});
