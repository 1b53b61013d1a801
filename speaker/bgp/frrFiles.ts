// The files shared with the FRR agent: the configuration the speaker writes (atomically, and only when its text
// changes, so FRR is reloaded only for real changes) and the status the agent writes back.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readAgentStatus, type AgentStatus } from "./sessions.ts";

export class FrrFiles {
  private readonly dir: string;
  private written: string | undefined;
  private statusMtimeMs = -1;
  private status: AgentStatus | undefined;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
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
