// What FRR says about the sessions, as the FRR agent last wrote it (`show bgp neighbors json` and
// `show bfd peers json`), reduced to what users need to read on a peer's status and in metrics: whether the
// session is up, how many prefixes went out, and, when it is not up, the most telling reason FRR gives.
import { isPlainObject } from "../../shared/labelSelector.ts";

export interface SessionState {
  readonly address: string;
  /** FRR's state: Idle, Connect, Active, OpenSent, OpenConfirm, Established. */
  readonly state: string;
  readonly established: boolean;
  readonly prefixesSent: number;
  /** BFD's view of the peer: up, down, init, adminDown; absent without BFD. */
  readonly bfd?: string;
  /** Why the session is not up (or last went down), in FRR's words. */
  readonly lastError?: string;
}

export interface AgentStatus {
  /** When the agent wrote it (seconds since the epoch). */
  readonly time: number;
  readonly reload: { generation: number | null; ok: boolean | null; output: string };
  readonly sessions: Map<string, SessionState>;
  /** The agent could not read FRR (daemons down or starting). */
  readonly error?: string;
}

export function readAgentStatus(raw: unknown): AgentStatus | undefined {
  if (!isPlainObject(raw)) return undefined;
  const reload = isPlainObject(raw.reload) ? raw.reload : {};
  const bfd = new Map<string, string>();
  for (const peer of Array.isArray(raw.bfd) ? raw.bfd : []) {
    if (isPlainObject(peer) && typeof peer.peer === "string" && typeof peer.status === "string")
      bfd.set(peer.peer, peer.status);
  }
  const sessions = new Map<string, SessionState>();
  for (const [address, info] of Object.entries(isPlainObject(raw.neighbors) ? raw.neighbors : {})) {
    if (!isPlainObject(info)) continue;
    const state = typeof info.bgpState === "string" ? info.bgpState : "Unknown";
    const established = state === "Established";
    const families = isPlainObject(info.addressFamilyInfo) ? Object.values(info.addressFamilyInfo) : [];
    const prefixesSent = families.reduce<number>(
      (sum, af) =>
        sum + (isPlainObject(af) && typeof af.sentPrefixCounter === "number" ? af.sentPrefixCounter : 0),
      0,
    );
    const lastError = established ? undefined : errorOf(info);
    sessions.set(address, {
      address,
      state,
      established,
      prefixesSent,
      ...(bfd.has(address) ? { bfd: bfd.get(address)! } : {}),
      ...(lastError ? { lastError } : {}),
    });
  }
  return {
    time: typeof raw.time === "number" ? raw.time : 0,
    reload: {
      generation: typeof reload.generation === "number" ? reload.generation : null,
      ok: typeof reload.ok === "boolean" ? reload.ok : null,
      output: typeof reload.output === "string" ? reload.output : "",
    },
    sessions,
    ...(typeof raw.error === "string" ? { error: raw.error } : {}),
  };
}

/**
 * FRR keeps the last NOTIFICATION (a wrong AS number: "OPEN Message Error/Bad Peer AS") and why the session
 * was last reset. A wrong password leaves no NOTIFICATION at all — the peer drops the TCP segments whose MD5
 * signature does not match — so a session that never came up with a password set is said to be that or an
 * unreachable peer.
 */
function errorOf(info: Record<string, unknown>): string | undefined {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  const notification = text(info.lastNotificationReason) ?? text(info.lastErrorCodeSubcodeText);
  if (notification) return notification;
  const established = typeof info.connectionsEstablished === "number" ? info.connectionsEstablished : 0;
  if (established === 0)
    return "never established: the peer does not answer — it is unreachable, not configured for this node, or refuses the session's password (TCP MD5)";
  return text(info.lastResetDueTo);
}
