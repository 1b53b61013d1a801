// The HAProxy that carries the NLB listeners the kernel cannot (proxyPlan.ts), run in the edge beside the health
// checker: started with the first such listener, reloaded in place when listeners or their targets change, so open
// connections finish on the old worker.
import type { EdgeHost } from "./edgeHost.ts";
import { HaproxyProcess } from "./haproxyProcess.ts";
import { proxyConfig, type ProxiedListener } from "./proxyPlan.ts";

export class ListenerProxy {
  private readonly haproxy: HaproxyProcess;
  private config = "";

  constructor(edge: EdgeHost, dir: string) {
    this.haproxy = new HaproxyProcess(edge, dir, "proxy");
  }

  /** Carries these listeners from now on (none: nothing runs until there is one). */
  async apply(listeners: readonly ProxiedListener[]): Promise<void> {
    const config = proxyConfig(listeners, { socket: this.haproxy.socket });
    if (config === this.config || (!listeners.length && !this.haproxy.running)) return;
    await this.haproxy.load(config);
    this.config = config;
  }
}
