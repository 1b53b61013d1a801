// Keeps the status of this controller's GatewayClasses as Gateway API asks (conditions decided in classes.ts). A
// cluster without the Gateway API CRDs is told once in the log and left alone, so the controller serves Services
// exactly as without it. Status is written only while this replica leads, and only when it differs.
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import type { Logger } from "../../shared/log.ts";
import {
  BUNDLE_VERSION_ANNOTATION,
  classConditions,
  GATEWAY_CLASS_CRD,
  GATEWAY_GROUP,
  isOwnClass,
  type GatewayClass,
} from "./classes.ts";

const API = { group: GATEWAY_GROUP, version: "v1", plural: "gatewayclasses" } as const;
const MAX_DELAY_MS = 30_000;

type ClassObject = GatewayClass & KubernetesObject;

export interface ClassReconcilerOptions {
  kc: KubeConfig;
  /** The spec.controllerName of the classes served (gatewayControllerName()). */
  controllerName: string;
  log: Logger;
  /** How often every class is looked at again, the CRDs' bundle version read anew (it changes on upgrade). */
  resyncPeriodMs: number;
}

export class GatewayClassReconciler {
  private readonly opts: ClassReconcilerOptions;
  private readonly crds: ApiextensionsV1Api;
  private readonly custom: CustomObjectsApi;
  private lw: ListWatch<ClassObject> | undefined;
  private readonly pending = new Set<string>();
  private leading = false;
  private stopped = false;
  private draining: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private retryDelay = 500;

  constructor(opts: ClassReconcilerOptions) {
    this.opts = opts;
    this.crds = opts.kc.makeApiClient(ApiextensionsV1Api);
    this.custom = opts.kc.makeApiClient(CustomObjectsApi);
  }

  /** Watches GatewayClasses when their CRD is installed; resolves once they are listed, or at once without it. */
  async start(): Promise<void> {
    const { log } = this.opts;
    let installed: boolean;
    try {
      installed = (await this.bundleVersion()) !== null;
    } catch (err) {
      log.warn(
        { err: String(err), crd: GATEWAY_CLASS_CRD },
        "cannot read the GatewayClass CRD: GatewayClasses are not served (grant get on customresourcedefinitions)",
      );
      return;
    }
    if (!installed) {
      log.info(
        { crd: GATEWAY_CLASS_CRD },
        "Gateway API CRDs are not installed: GatewayClasses are not served (restart the controller after installing them)",
      );
      return;
    }
    const lw = new ListWatch<ClassObject>(
      `/apis/${API.group}/${API.version}/${API.plural}`,
      new Watch(this.opts.kc),
      () =>
        this.custom.listClusterCustomObject(API) as Promise<{
          items: ClassObject[];
          metadata?: { resourceVersion?: string };
        }>,
      false,
    );
    this.lw = lw;
    for (const verb of ["add", "update"] as const)
      lw.on(verb, (gc) => {
        if (isOwnClass(gc, this.opts.controllerName)) this.enqueue(gc.metadata?.name);
      });
    let delay = 500;
    lw.on("connect", () => {
      if (lw.latestResourceVersion()) delay = 500;
    });
    lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      log.warn({ kind: GATEWAY_CLASS_CRD, err: String(err), retryInMs: delay }, "watch failed; restarting");
      setTimeout(() => {
        if (!this.stopped) lw.start().catch(() => undefined);
      }, delay).unref();
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    });
    await lw.start();
    this.resync = setInterval(() => this.enqueueAll(), this.opts.resyncPeriodMs);
    this.resync.unref();
    log.info({ controllerName: this.opts.controllerName }, "serving GatewayClasses");
  }

  /** This replica leads: every class is looked at now, and changes from here on. */
  lead(): void {
    this.leading = true;
    this.enqueueAll();
  }

  /** Another replica leads: no more writes (one under way finishes). */
  async unlead(): Promise<void> {
    this.leading = false;
    await this.draining;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.retry);
    await this.unlead();
    await this.lw?.stop();
  }

  private enqueueAll(): void {
    for (const gc of this.lw?.list() ?? [])
      if (isOwnClass(gc, this.opts.controllerName)) this.pending.add(gc.metadata!.name!);
    this.kick();
  }

  private enqueue(name: string | undefined): void {
    if (!name) return;
    this.pending.add(name);
    this.kick();
  }

  private kick(): void {
    if (this.draining || !this.leading || this.stopped || !this.lw) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      // Events that came while the last write was under way.
      if (this.pending.size && !this.retry) this.kick();
    });
  }

  /** Writes the status of each pending class; a failure keeps it pending and tries again later. */
  private async drain(): Promise<void> {
    const { log, controllerName } = this.opts;
    let version: string | undefined;
    try {
      version = (await this.bundleVersion()) ?? undefined;
    } catch (err) {
      log.warn({ err: String(err), crd: GATEWAY_CLASS_CRD }, "cannot read the Gateway API bundle version");
      this.later();
      return;
    }
    let failed = false;
    while (this.pending.size && this.leading && !this.stopped) {
      const name = this.pending.values().next().value!;
      this.pending.delete(name);
      const gc = this.lw!.get(name);
      const conditions = gc && classConditions(gc, controllerName, version, new Date());
      if (!gc || !conditions) continue;
      try {
        // A replace carries the resourceVersion read: a class changed meanwhile is refused (409) and comes
        // back with its update event, so conditions are merged into the latest copy only, as the spec asks.
        await this.custom.replaceClusterCustomObjectStatus({
          ...API,
          name,
          body: { ...gc, status: { ...gc.status, conditions } },
        });
        log.info(
          { gatewayClass: name, conditions: conditions.map((c) => `${c.type}=${c.status}/${c.reason}`) },
          "GatewayClass status written",
        );
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404 || code === 409) continue;
        log.warn({ gatewayClass: name, err: String(err) }, "writing GatewayClass status failed; retrying");
        this.pending.add(name);
        failed = true;
        break;
      }
    }
    if (failed) this.later();
    else this.retryDelay = 500;
  }

  private later(): void {
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.kick();
    }, this.retryDelay);
    this.retry.unref();
    this.retryDelay = Math.min(this.retryDelay * 2, MAX_DELAY_MS);
  }

  /** The installed CRDs' bundle version: null when the GatewayClass CRD is absent, undefined when unannotated. */
  private async bundleVersion(): Promise<string | undefined | null> {
    try {
      const crd = await this.crds.readCustomResourceDefinition({ name: GATEWAY_CLASS_CRD });
      return crd.metadata?.annotations?.[BUNDLE_VERSION_ANNOTATION];
    } catch (err) {
      if ((err as { code?: number }).code === 404) return null;
      throw err;
    }
  }
}
