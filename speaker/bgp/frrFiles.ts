// The files shared with the FRR agent: the configuration the speaker writes (atomically, and only when its text
// changes, so FRR is reloaded only for real changes) and the status the agent writes back.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readAgentStatus, type AgentStatus } from "./sessions.ts";

/** Written when the speaker stops (see release); the DaemonSet's preStop hooks name it too. */
const RELEASED = "released";

export class FrrFiles {
  private readonly dir: string;
  private written: string | undefined;
  private statusMtimeMs = -1;
  private status: AgentStatus | undefined;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    // A speaker container restarted in the same pod starts over: FRR is not to stop until it says so again.
    rmSync(join(dir, RELEASED), { force: true });
  }

  /** Writes the configuration when it differs from the last written; returns whether it wrote. */
  write(text: string): boolean {
    // The first line carries the generation, which changes with every render: compare the rest.
    const body = text.slice(text.indexOf("\n") + 1);
    if (body === this.written) return false;
    const path = join(this.dir, "frr.conf");
    writeFileSync(`${path}.tmp`, text, { mode: 0o644 });
    renameSync(`${path}.tmp`, path);
    this.written = body;
    return true;
  }

  /**
   * Says the speaker is done with FRR (its routes withdrawn, or kept for the next pod): FRR's containers wait for
   * this file before they stop (their preStop hooks), so a departing node's withdrawal reaches its peers before
   * FRR ends the sessions.
   */
  release(): void {
    writeFileSync(join(this.dir, RELEASED), `${new Date().toISOString()}\n`);
  }

  /** The agent's last status, read again only when the file changed; undefined until there is one. */
  readStatus(): AgentStatus | undefined {
    const path = join(this.dir, "status.json");
    try {
      const { mtimeMs } = statSync(path);
      if (mtimeMs === this.statusMtimeMs) return this.status;
      this.status = readAgentStatus(JSON.parse(readFileSync(path, "utf8")));
      this.statusMtimeMs = mtimeMs;
    } catch {
      // Missing (the agent has not written yet) or caught mid-write by a non-atomic writer: the last one stands.
    }
    return this.status;
  }
}
