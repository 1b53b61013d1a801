// How the apiserver reaches the kubelets (`kubectl exec`, `logs`, `port-forward`, the nodes' proxy): it runs in
// the root namespace on loopback and the nodes are on the LAN, which the root namespace has no route to and
// must not be given one. kube-apiserver's egress selector sends its `cluster` traffic through an HTTP CONNECT
// proxy on a Unix socket, as it does through konnectivity on clusters whose nodes sit behind a network the
// control plane cannot reach; here the proxy runs inside the LAN's namespace and dials from there.
import { LanProcess } from "../netns.ts";

/** kube-apiserver's `--egress-selector-config-file`: only `cluster` traffic goes through the socket. */
export function egressSelectorConfig(socketPath: string): string {
  return JSON.stringify(
    {
      apiVersion: "apiserver.k8s.io/v1beta1",
      kind: "EgressSelectorConfiguration",
      egressSelections: [
        {
          name: "cluster",
          connection: { proxyProtocol: "HTTPConnect", transport: { uds: { udsName: socketPath } } },
        },
      ],
    },
    null,
    2,
  );
}

/**
 * The proxy: a process in the LAN's namespace serving HTTP CONNECT on `socketPath` (a file-system socket,
 * reachable from the root namespace), killed with the process that started it.
 */
export async function startEgressProxy(
  namespace: string,
  socketPath: string,
  logFile: string,
): Promise<LanProcess> {
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = new LanProcess(
    "apiserver-egress",
    logFile,
    namespace,
    process.execPath,
    ["-e", PROXY, socketPath],
    {
      onLine: (line) => line === "listening" && listening(),
    },
  );
  await Promise.race([
    ready,
    proc.exited.then((code) =>
      Promise.reject(new Error(`apiserver egress proxy exited (${code}): ${proc.tail()}`)),
    ),
  ]);
  return proc;
}

// One CONNECT per connection (what kube-apiserver sends): the request head is read up to its blank line, the
// target dialled, and from the 200 on the two sides are piped; bytes past the head are the tunnel's first.
const PROXY = `
const net = require("node:net");
const fs = require("node:fs");
const path = process.argv[1];
fs.rmSync(path, { force: true });
net.createServer((client) => {
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\\r\\n\\r\\n");
    if (end < 0) return head.length > 8192 && client.destroy();
    client.off("data", onData);
    client.pause();
    const match = /^CONNECT (\\S+):(\\d+) HTTP\\/1\\.[01]\\r\\n/.exec(head.subarray(0, end).toString());
    if (!match) return client.end("HTTP/1.1 405 Method Not Allowed\\r\\n\\r\\n");
    const host = match[1].replace(/^\\[|\\]$/g, "");
    const upstream = net.connect(Number(match[2]), host, () => {
      client.write("HTTP/1.1 200 Connection established\\r\\n\\r\\n");
      const rest = head.subarray(end + 4);
      if (rest.length) upstream.write(rest);
      client.pipe(upstream).pipe(client);
    });
    upstream.on("error", (err) => {
      console.error("CONNECT " + match[1] + ":" + match[2] + ": " + err.message);
      if (client.writable && !client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\\r\\n\\r\\n");
      client.destroy();
    });
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  };
  client.on("data", onData);
  client.on("error", () => undefined);
}).listen(path, () => console.log("listening"));`;
