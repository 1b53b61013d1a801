// `make demo`: brings up Portico's local environment (a real kube-apiserver + etcd and the AWS emulator),
// shows that it works, prints how to reach it, and keeps it running until Ctrl-C.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { EnvironmentError } from "../harness/errors.ts";
import { startEnvironment } from "../harness/environment.ts";

const dir = join(import.meta.dirname, "..", "..", ".run", "demo");

async function main(): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  console.log(
    "Starting the local environment (the first run builds kube-apiserver and etcd; later runs take seconds)...",
  );
  const env = await startEnvironment({ awsEndpoints: 1, dir });
  const aws = env.awsEndpoints[0]!;

  const kc = new KubeConfig();
  kc.loadFromFile(env.controlPlane.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const svc = await core.createNamespacedService({
    namespace: "default",
    body: {
      metadata: { name: "hello" },
      spec: {
        type: "LoadBalancer",
        externalTrafficPolicy: "Local",
        selector: { app: "hello" },
        ports: [{ port: 80, targetPort: 8080 }],
      },
    },
  });

  console.log(`
Portico's local environment is up.

  Kubernetes API   ${env.controlPlane.server}  (kube-apiserver + etcd, RBAC on, no kubelets)
  AWS emulator     ${aws.url}  (${aws.kind}: EC2 and ELBv2)
  Files and logs   ${dir}

A LoadBalancer Service "default/hello" was created to show the apiserver at work:
  clusterIP ${svc.spec?.clusterIP}, nodePort ${svc.spec?.ports?.[0]?.nodePort}, healthCheckNodePort ${svc.spec?.healthCheckNodePort}

Reach it from another shell:
  export KUBECONFIG=${env.controlPlane.kubeconfig}
  export AWS_ENDPOINT_URL=${aws.url} AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
  kubectl get services -A        # any kubectl works with this kubeconfig
  curl -s ${aws.url}/moto-api/data.json   # everything the AWS emulator holds

Press Ctrl-C to stop; everything started here stops with it.`);

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  console.log("\nStopping...");
  await env.stop({ keepFiles: true });
}

main().catch((err: unknown) => {
  console.error(err instanceof EnvironmentError ? `portico: ${err.message}` : err);
  process.exit(1);
});
