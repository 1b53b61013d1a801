#!/usr/bin/env node
// portico-controller. Flags are described by --help.
//
// V8 sizes the young generation for throughput: once a Node.js 24 process has allocated for a while it keeps up
// to 64 MiB of each of two semi-spaces, 128 MiB resident that a controller whose live heap is well under that
// does not need (make bench-memory: the new space was 128 MiB of a 205 MiB heap). The controller allocates in
// bursts of small, short-lived objects (a reconcile's intent, plan and requests); semi-spaces of 4 MiB cost it
// a few more quick scavenges in a burst and save that memory for the whole life of the process. The flag only
// works on the command line, so the controller starts itself again with it, as the same process (execve), before
// loading anything. A size given in NODE_OPTIONS or on the command line is kept.
const FLAG = "--max-semi-space-size";
const SEMI_SPACE_MIB = 4;

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
  console.error(`portico-controller: ${(err as Error).message}`);
  process.exit(1);
});
