// The mutating admission webhook that gives new pods their readiness gates (gates.ts decides which). Every
// controller replica serves it, leading or not: it reads the pod's namespace's Services from the apiserver at
// admission, so it needs no cache and holds no state. The namespaces it is asked about are chosen by the
// webhook configuration's namespace selectors (INJECT_LABELS); its failure policy is the configuration's
// (manifests: Fail, so a labelled namespace's pods are not made without their gates while no replica answers).
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { listenAddress } from "../../shared/metricsServer.ts";
import type { Logger } from "../../shared/log.ts";
import { gatesFor, injection } from "./gates.ts";

export const MUTATE_PATH = "/mutate-v1-pod";

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
}

export interface PodAdmission {
  /** The Services of a namespace, read from the apiserver. */
  services(namespace: string): Promise<V1Service[]>;
  /** Whether the Service is Portico's and its load balancer sends traffic to pods. */
  sendsToPods(svc: V1Service): boolean;
  log: Logger;
}

/** The answer to one AdmissionReview: the pod as it is, or with its gates added. */
export async function admitPod(
  request: AdmissionRequest,
  admission: PodAdmission,
): Promise<AdmissionResponse> {
  const pod = request.object;
  const namespace = request.namespace ?? pod?.metadata?.namespace;
  if (request.kind?.kind !== "Pod" || request.operation !== "CREATE" || !pod || !namespace)
    return { uid: request.uid, allowed: true };
  let services: V1Service[];
  try {
    services = await admission.services(namespace);
  } catch (err) {
    // Refused rather than let through without its gates: the pod's owner tries again (a ReplicaSet does).
    const message = `Portico could not read the Services of namespace ${namespace} to give the pod its readiness gates: ${(err as Error).message}`;
    admission.log.warn({ namespace }, message);
    return { uid: request.uid, allowed: false, status: { code: 503, message } };
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
    if (req.method !== "POST" || req.url?.split("?")[0] !== MUTATE_PATH) return reply(404, "not found");
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
      admitPod(review.request, admission).then(
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
