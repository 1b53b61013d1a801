// The cgroup subtree of each local-cluster node. kubelet (cgroupfs driver) puts its pods under the node's
// subtree, and node.sh puts the node's own daemons there, so containerd's shims and the containers — which
// outlive containerd and escape any parent-death signal — are all found again: in the stop of this run, or
// in the sweep of a later run when this one was killed. The subtree sits under the cgroup this process is in,
// so the node counts against the same limits as the test run itself.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

const ROOT = "/sys/fs/cgroup";

/** The v1 hierarchies (cpu, memory, pids, ...): those kubelet's cgroupfs driver and runc use on this host. */
function hierarchies(): string[] {
  if (!existsSync(ROOT)) return [];
  return readdirSync(ROOT)
    .map((name) => join(ROOT, name))
    .filter((dir) => existsSync(join(dir, "cgroup.procs")) && !existsSync(join(dir, "cgroup.controllers")));
}

/**
 * Where this process sits: the memory controller's path when it has one (that is where a session's limit
 * lives), the root otherwise. The same relative path is used in every hierarchy, as cgroupfs expects.
 */
export function ownCgroupBase(): string {
  const lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  const memory = lines.find((l) => /^\d+:memory:/.test(l));
  return memory ? memory.split(":")[2]! : "/";
}

/** Makes `rel` in every hierarchy; a new cpuset takes its parent's CPUs and memory nodes (else it is unusable). */
export async function createCgroup(rel: string): Promise<void> {
  for (const hierarchy of hierarchies()) {
    const parts = rel.split("/").filter(Boolean);
    let path = hierarchy;
    for (const part of parts) {
      const parent = path;
      path = join(path, part);
      if (existsSync(path)) continue;
      await mkdir(path);
      if (hierarchy.endsWith("/cpuset")) {
        for (const file of ["cpuset.cpus", "cpuset.mems"])
          await writeFile(join(path, file), await readFile(join(parent, file)));
      }
    }
  }
}

/** Every process in `rel` and below, in the pids hierarchy (or any other: they all hold the same tree). */
function processesIn(rel: string): number[] {
  const hierarchy = hierarchies().find((h) => h.endsWith("/pids")) ?? hierarchies()[0];
  if (!hierarchy) return [];
  const pids: number[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n"))
      if (line) pids.push(Number(line));
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  walk(join(hierarchy, rel));
  return pids;
}

/** Kills every process in the subtree (until none is left) and removes it from every hierarchy. */
export async function destroyCgroup(rel: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = processesIn(rel);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    if (Date.now() > deadline)
      throw new Error(`processes ${pids.join(", ")} in cgroup ${rel} survived SIGKILL for ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const hierarchy of hierarchies()) await removeTree(join(hierarchy, rel));
}

/** Removes a cgroup directory and its children, deepest first (cgroup directories go with rmdir only). */
async function removeTree(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) await removeTree(join(dir, entry.name));
  // A cgroup whose last process just exited may be busy for a moment.
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      if (attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Subtrees named `<prefix>-<pid>-...` under `base` whose creating process is gone (a killed run). */
export function staleCgroups(base: string, prefix: string): string[] {
  const hierarchy = hierarchies().find((h) => h.endsWith("/pids")) ?? hierarchies()[0];
  if (!hierarchy || !existsSync(join(hierarchy, base))) return [];
  return readdirSync(join(hierarchy, base))
    .filter((name) => {
      const match = new RegExp(`^${prefix}-(\\d+)-`).exec(name);
      if (!match) return false;
      try {
        process.kill(Number(match[1]), 0);
        return false;
      } catch {
        return true;
      }
    })
    .map((name) => join(base, name));
}
