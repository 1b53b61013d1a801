// The TCP side of the membership port (silence.ts says why): a listener whose only job is to exist, so that a
// peer's node kernel completes connections to it while this speaker's process exists, even starved; and the
// probe that asks a peer's kernel exactly that.
import { connect, createServer, type Server } from "node:net";
import type { Presence } from "./silence.ts";

/** Listens on TCP `port` (at `host`, or every address); connections are closed as soon as they are accepted. */
export async function listenPresence(port: number, host: string | undefined): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  server.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, ...(host ? { host } : {}) }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

/** Whether `address` has a process listening on TCP `port`, as its kernel answers; never rejects. */
export function probePresence(address: string, port: number, timeoutMs: number): Promise<Presence> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    const done = (presence: Presence) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(presence);
    };
    const timer = setTimeout(() => done("unreachable"), timeoutMs);
    socket.once("connect", () => done("process"));
    socket.once("error", (err: NodeJS.ErrnoException) =>
      done(err.code === "ECONNREFUSED" ? "no-process" : "unreachable"),
    );
  });
}
