// Runs the readiness-gate webhook inside the controller: its certificate (certificateStore.ts), its server
// (webhook.ts), and a look at the certificate every hour (a renewed one is served to new connections).
import { AdmissionregistrationV1Api, type CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { classServedUnder, wantsLoadBalancer, type ClassConfig } from "../../providers/classes.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";
import type { Logger } from "../../shared/log.ts";
import { buildIntent } from "../intent.ts";
import { serviceNames } from "./certificate.ts";
import { keptCertificate, mountedCertificate, trustAuthority } from "./certificateStore.ts";
import {
  MUTATE_PATH,
  serveWebhook,
  WEBHOOK_PATHS,
  type PodAdmission,
  type WebhookServer,
} from "./webhook.ts";

export interface WebhookConfig {
  /** Where the webhook listens (HOST:PORT). */
  address: string;
  /** A mounted certificate (tls.crt, tls.key), e.g. cert-manager's; absent: Portico keeps its own. */
  certDir?: string;
  /** The controller's namespace, where the webhook's Service and certificate live. */
  namespace: string;
  /**
   * The MutatingWebhookConfiguration whose caBundle Portico sets to its authority, the webhook's Service (whose
   * names the certificate carries) and the Secret Portico keeps the certificate in (`<service>-cert`). Found when
   * not given: the one configuration that sends pods to this namespace's webhook, and its Service — so that a
   * name prefix in the user's kustomization (which renames them all) needs no flag.
   */
  configuration?: string;
  service?: string;
  secret?: string;
}

interface WebhookNames {
  configuration: string;
  service: string;
  secret: string;
}

async function webhookNames(api: AdmissionregistrationV1Api, config: WebhookConfig): Promise<WebhookNames> {
  const named = (configuration: string, service: string): WebhookNames => ({
    configuration,
    service,
    secret: config.secret ?? `${service}-cert`,
  });
  if (config.configuration && config.service) return named(config.configuration, config.service);
  const ours = (await api.listMutatingWebhookConfiguration()).items.flatMap((c) =>
    (c.webhooks ?? [])
      .map((w) => w.clientConfig.service)
      .filter((s) => s?.namespace === config.namespace && WEBHOOK_PATHS.includes(s.path ?? ""))
      .filter(() => !config.configuration || c.metadata?.name === config.configuration)
      .map((s) => named(c.metadata!.name!, config.service ?? s!.name)),
  );
  const found = [...new Map(ours.map((n) => [n.configuration, n])).values()];
  if (found.length === 1) return found[0]!;
  throw new Error(
    found.length
      ? `MutatingWebhookConfigurations ${found.map((n) => n.configuration).join(", ")} all send pods to this namespace's webhook: name one with --webhook-configuration`
      : `no MutatingWebhookConfiguration sends pods to a webhook in namespace ${config.namespace} at ${MUTATE_PATH}: apply the manifests of this release`,
  );
}

const LOOK_AGAIN_MS = 3_600_000;
const RETRY_MS = 30_000;

export interface ReadinessGateWebhook {
  /** Resolves once the webhook serves (it keeps trying until it can). */
  serving: Promise<WebhookServer>;
  stop(): Promise<void>;
}

export function startReadinessGateWebhook(
  config: WebhookConfig,
  deps: {
    kc: KubeConfig;
    core: CoreV1Api;
    provider: LoadBalancerProvider;
    classes: ClassConfig;
    log: Logger;
    /** The one namespace the controller serves (--namespace); absent: all. */
    servedNamespace?: string;
  },
): ReadinessGateWebhook {
  const log = deps.log.child({ component: "webhook" });
  const admissionApi = deps.kc.makeApiClient(AdmissionregistrationV1Api);
  const certificate = async () => {
    if (config.certDir) return mountedCertificate(config.certDir);
    const { configuration, service, secret } = await webhookNames(admissionApi, config);
    const names = serviceNames(service, config.namespace);
    const kept = await keptCertificate(deps.core, { namespace: config.namespace, secret, names }, log);
    await trustAuthority(admissionApi, configuration, kept.ca, log);
    return kept;
  };
  const admission: PodAdmission = {
    // Nearly every new pod of the cluster is asked about, so the read is kept small: the namespace's LoadBalancer
    // Services alone (the apiserver filters them by spec.type), and none at all where no load balancer
    // says how pods fare (bare metal: nothing would ever gate a pod) or in a namespace this controller does not
    // serve (it would never open the gate).
    services: async (namespace) =>
      deps.provider.reportsPodHealth && (!deps.servedNamespace || deps.servedNamespace === namespace)
        ? (await deps.core.listNamespacedService({ namespace, fieldSelector: "spec.type=LoadBalancer" }))
            .items
        : [],
    sendsToPods: (svc) => {
      if (!deps.provider.reportsPodHealth || !wantsLoadBalancer(svc, deps.classes)) return false;
      try {
        const intent = buildIntent(svc, [], [], classServedUnder(svc, deps.classes));
        return deps.provider.targetType?.(intent) === "ip";
      } catch {
        // A Service the controller refuses has no load balancer to wait for.
        return false;
      }
    },
    log,
  };
  let stopped = false;
  let running: WebhookServer | undefined;
  const timers: NodeJS.Timeout[] = [];
  const wait = (ms: number) => new Promise<void>((resolve) => timers.push(setTimeout(resolve, ms)));
  const serving = (async () => {
    for (;;) {
      try {
        const tls = await certificate();
        const server = await serveWebhook(config.address, tls, admission);
        running = server;
        log.info({ port: server.port }, "serving the readiness-gate webhook");
        void (async () => {
          let current = tls.cert;
          while (!stopped) {
            await wait(LOOK_AGAIN_MS);
            if (stopped) return;
            const next = await certificate().catch((err: unknown) => {
              log.warn({ err: (err as Error).message }, "could not look at the webhook's certificate");
              return undefined;
            });
            if (next && next.cert !== current) {
              server.setCertificate(next);
              current = next.cert;
              log.info("serving the webhook's renewed certificate");
            }
          }
        })();
        return server;
      } catch (err) {
        log.warn(
          { err: (err as Error).message, retryInMs: RETRY_MS },
          "cannot serve the readiness-gate webhook yet",
        );
        if (stopped) throw err;
        await wait(RETRY_MS);
      }
    }
  })();
  serving.catch(() => undefined);
  return {
    serving,
    async stop() {
      stopped = true;
      timers.forEach((t) => clearTimeout(t));
      await running?.close();
    },
  };
}
