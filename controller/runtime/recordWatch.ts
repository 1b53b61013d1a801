// A list-watch of the speakers' records (ServiceL2Status, ServiceBGPStatus): optional, since a cluster may lack
// the CRD or the controller the right to read it — then nothing is known of where traffic enters, and the
// Serving condition is not reported rather than wrong. A record's change brings its Service back at once, so
// the Serving condition follows a failover within the watch's latency.
import {
  CustomObjectsApi,
  ListWatch,
  type KubeConfig,
  type KubernetesObject,
  type Watch,
} from "@kubernetes/client-node";
import type { Logger } from "../../shared/log.ts";

const MAX_RESTART_DELAY_MS = 30_000;

export type RecordObject = KubernetesObject & { status?: unknown };

export interface RecordKindInfo {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Keeps only what is read of an object, before the cache stores it. */
  readonly trim?: (obj: RecordObject) => void;
  /** The Service a record is about. */
  readonly serviceOf: (obj: RecordObject) => { namespace: string; name: string } | undefined;
}

export class RecordWatch {
  readonly lw: ListWatch<RecordObject>;
  private readonly info: RecordKindInfo;
  private readonly log: Logger;
  /** The resourceVersion when the list answered 404 or 403: no records can be read until it moves. */
  private missingAt: string | undefined;
  private stopped = false;

  constructor(
    kc: KubeConfig,
    watch: Watch,
    namespace: string | undefined,
    info: RecordKindInfo,
    log: Logger,
    changed: (service: KubernetesObject, verb: "add" | "update" | "delete") => void,
  ) {
    this.info = info;
    this.log = log;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const api = { group: info.group, version: info.version, plural: info.plural };
    this.lw = new ListWatch<RecordObject>(
      namespace
        ? `/apis/${info.group}/${info.version}/namespaces/${namespace}/${info.plural}`
        : `/apis/${info.group}/${info.version}/${info.plural}`,
      watch,
      () =>
        (namespace
          ? custom.listNamespacedCustomObject({ ...api, namespace })
          : custom.listClusterCustomObject(api)) as Promise<{
          items: RecordObject[];
          metadata?: { resourceVersion?: string };
        }>,
      false,
    );
    // Before any other handler: the cache keeps the object its handlers get, and needs little of it.
    if (info.trim) for (const verb of ["add", "update"] as const) this.lw.on(verb, info.trim);
    for (const verb of ["add", "update", "delete"] as const) {
      this.lw.on(verb, (obj) => {
        const service = info.serviceOf(obj);
        if (service) changed({ metadata: service }, verb);
      });
    }
    this.wireErrors();
  }

  get name(): string {
    return `${this.info.plural}.${this.info.group}`;
  }

  /** No records can be read: the CRD is missing, or the controller may not list them. */
  missing(): boolean {
    return this.missingAt !== undefined && this.missingAt === this.lw.latestResourceVersion();
  }

  listed(): boolean {
    return this.lw.latestResourceVersion() !== "" || this.missing();
  }

  /** The records of a namespace; undefined when they cannot be read. */
  list(namespace: string): readonly RecordObject[] | undefined {
    return this.missing() ? undefined : this.lw.list(namespace);
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.lw.stop();
  }

  private wireErrors(): void {
    let delay = 500;
    this.lw.on("connect", () => {
      if (this.lw.latestResourceVersion()) delay = 500;
    });
    this.lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      const code = (err as { code?: unknown })?.code ?? (err as { statusCode?: unknown })?.statusCode;
      if (code === 404 || code === 403) {
        const told = this.missingAt !== undefined;
        this.missingAt = this.lw.latestResourceVersion();
        if (!told)
          this.log.warn(
            {
              kind: this.name,
              err:
                code === 404
                  ? `the ${this.name} CRD is not installed (kubectl apply -k manifests/overlays/metal)`
                  : `may not list ${this.name}: apply the metal overlay's RBAC (manifests/overlays/metal/controller-rbac.yaml)`,
            },
            "the Serving condition does not count these records until they can be read",
          );
      } else {
        this.log.warn(
          { kind: this.name, err: (err as Error)?.message ?? String(err) },
          "watch failed; restarting",
        );
      }
      setTimeout(
        () => {
          if (!this.stopped) this.lw.start().catch(() => undefined);
        },
        Math.min(delay, MAX_RESTART_DELAY_MS),
      ).unref();
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    });
  }
}
