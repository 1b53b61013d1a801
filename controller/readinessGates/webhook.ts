// The mutating admission webhook that gives new pods their readiness gates (gates.ts decides which). Every
// controller replica serves it, leading or not: it reads the pod's namespace's Services from the apiserver at
// admission, so it needs no cache and holds no state. The webhook configuration's namespace selectors
// (INJECT_LABELS) send each namespace's pods to one of two paths: namespaces that opted in to MUTATE_PATH, with
// the failure policy Fail (no pod made without its gates while no replica answers), and every other namespace
// that did not opt out to BEST_EFFORT_PATH, with Ignore and a short timeout. The two differ only when the
// Services cannot be read: refused on the first, let through without gates on the second, since a refusal the
// webhook answers is not a failure the policy Ignore lets through.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { listenAddress } from "../../shared/metricsServer.ts";
import type { Logger } from "../../shared/log.ts";
import { gatesFor, INJECT_LABELS, INJECT_VALUE, injection } from "./gates.ts";

/** For namespaces that opted in: a pod whose gates cannot be worked out is refused. */
export const MUTATE_PATH = "/mutate-v1-pod";
/** For the others: a pod whose gates cannot be worked out is made without them. */
export const BEST_EFFORT_PATH = "/mutate-v1-pod/best-effort";
export const WEBHOOK_PATHS: readonly string[] = [MUTATE_PATH, BEST_EFFORT_PATH];

interface AdmissionRequest {
  uid: string;
  kind?: { kind?: string };
  operation?: string;
  namespace?: string;
  object?: V1Pod;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: "JSONPatch";
  patch?: string;
  status?: { code: number; message: string };
  /** Shown to whoever made the pod (kubectl prints them). */
  warnings?: string[];
}

export interface PodAdmission {
  /** The Services of a namespace, read from the apiserver. */
  services(namespace: string): Promise<V1Service[]>;
  /** Whether the Service is Portico's and its load balancer sends traffic to pods. */
  sendsToPods(svc: V1Service): boolean;
  log: Logger;
}

/**
 * The answer to one AdmissionReview: the pod as it is, or with its gates added. `bestEffort`: the namespace did
 * not opt in, so a pod is never refused.
 */
export async function admitPod(
  request: AdmissionRequest,
  admission: PodAdmission,
  bestEffort = false,
): Promise<AdmissionResponse> {
  const pod = request.object;
  const namespace = request.namespace ?? pod?.metadata?.namespace;
  if (request.kind?.kind !== "Pod" || request.operation !== "CREATE" || !pod || !namespace)
    return { uid: request.uid, allowed: true };
  let services: V1Service[];
  try {
    services = await admission.services(namespace);
  } catch (err) {
    const why = `Portico could not read the Services of namespace ${namespace} to give the pod its readiness gates: ${(err as Error).message}`;
    if (bestEffort) {
      // Made as it would be without Portico: its rollout just does not wait for the load balancer. The warning
      // is kept short (the apiserver may truncate long ones), the log has the error.
      admission.log.warn(
        { namespace },
        `${why}; the pod is made without them (label the namespace ${INJECT_LABELS[0]}=${INJECT_VALUE} to have such pods refused instead)`,
      );
      const warning = `made without Portico's readiness gates: the Services of namespace ${namespace} could not be read`;
      return { uid: request.uid, allowed: true, warnings: [warning] };
    }
    // Refused rather than let through without its gates: the pod's owner tries again (a ReplicaSet does).
    admission.log.warn({ namespace }, why);
    return { uid: request.uid, allowed: false, status: { code: 503, message: why } };
  }
  const gates = gatesFor(pod, services, (svc) => admission.sendsToPods(svc));
  if (!gates.length) return { uid: request.uid, allowed: true };
  const name = pod.metadata?.name ?? pod.metadata?.generateName ?? "";
  admission.log.debug({ namespace, pod: name, gates }, "readiness gates added");
  return {
    uid: request.uid,
    allowed: true,
    patchType: "JSONPatch",
    patch: Buffer.from(JSON.stringify(injection(pod, gates))).toString("base64"),
  };
}

export interface WebhookServer {
  port: number;
  /** A renewed certificate: new connections use it. */
  setCertificate(tls: { cert: string; key: string }): void;
  close(): Promise<void>;
}

export async function serveWebhook(
  address: string,
  tls: { cert: string; key: string },
  admission: PodAdmission,
): Promise<WebhookServer> {
  const { host, port } = listenAddress(address);
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && req.url === "/healthz") return reply(200, "ok");
    const path = req.url?.split("?")[0] ?? "";
    if (req.method !== "POST" || !WEBHOOK_PATHS.includes(path)) return reply(404, "not found");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let review: { apiVersion?: string; request?: AdmissionRequest };
      try {
        review = JSON.parse(Buffer.concat(chunks).toString()) as typeof review;
      } catch {
        return reply(400, "not an AdmissionReview");
      }
      if (!review.request?.uid) return reply(400, "not an AdmissionReview");
      admitPod(review.request, admission, path === BEST_EFFORT_PATH).then(
        (response) =>
          reply(200, {
            apiVersion: review.apiVersion ?? "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response,
          }),
        (err: unknown) => reply(500, String(err)),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    setCertificate: (next) => server.setSecureContext({ cert: next.cert, key: next.key }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
