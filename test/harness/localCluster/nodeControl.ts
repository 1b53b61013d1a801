// Power for the local cluster's nodes, from any process: the process that started the cluster owns every
// node's processes (they die with it), so a test worker asks it over a Unix socket to cut a node's power
// (every process of the node killed at once, containers included, its cable pulled) or to boot it again.
import { createServer, request, type Server } from "node:http";
import type { WorkerNode } from "./workerNode.ts";

export type PowerAction = "off" | "on";

/** Serves POST /nodes/<name>/off and /on on `socketPath` for `nodes`; returns the server to close. */
export async function servePowerControl(socketPath: string, nodes: WorkerNode[]): Promise<Server> {
  const server = createServer((req, res) => {
    const [, kind, name, action] = (req.url ?? "").split("/");
    const node = nodes.find((n) => n.name === name);
    if (req.method !== "POST" || kind !== "nodes" || !node || (action !== "off" && action !== "on")) {
      res.writeHead(404).end(`no such action: ${req.method} ${req.url}`);
      return;
    }
    const done = action === "off" ? node.powerOff() : node.powerOn();
    done.then(
      () => res.writeHead(204).end(),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(socketPath, resolve));
  return server;
}

/** Asks the cluster's owner to power a node off or on; resolves once it is done. */
export function power(socketPath: string, node: string, action: PowerAction): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "POST", path: `/nodes/${node}/${action}` }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () =>
        res.statusCode === 204 ? resolve() : reject(new Error(`powering ${node} ${action}: ${body}`)),
      );
    });
    req.on("error", reject);
    req.end();
  });
}
