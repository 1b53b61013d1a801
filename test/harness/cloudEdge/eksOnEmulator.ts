// Portico as on EKS, against the AWS emulator: moto on this machine reachable from the pods at the LAN's gateway,
// a VPC tagged for the eks overlay's cluster name, and the overlay installed with static test credentials standing
// in for IRSA or Pod Identity. Everything goes when the test finishes.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { startMoto } from "../awsEmulator.ts";
import { TestAws } from "../aws.ts";
import { reachableFromPods, type E2eNamespace } from "../e2e.ts";
import { installPortico, uninstall } from "../localCluster/install.ts";
import { LAN_GATEWAY } from "../netns.ts";
import { ensureTools } from "../tools.ts";

/** The cluster name the eks overlay ships with; the emulator's subnets are tagged for it. */
export const EKS_CLUSTER_NAME = "my-cluster";

export async function eksOnEmulator(ns: E2eNamespace): Promise<TestAws> {
  const tools = await ensureTools("all");
  const dir = await mkdtemp(join(tmpdir(), "portico-e2e-aws-"));
  const moto = await startMoto(tools.motoServer!, dir, 1);
  onTestFinished(async () => {
    await moto.process.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const port = Number(new URL(moto.endpoint.url).port);
  const forward = await reachableFromPods(ns.context, port, dir);
  onTestFinished(() => forward.stop());
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: moto.endpoint.url,
    PORTICO_AWS_EMULATOR: "moto",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
  });
  const aws = await TestAws.fresh();
  await aws.createNetwork(EKS_CLUSTER_NAME, { internal: true });

  const env = [
    { name: "AWS_ENDPOINT_URL", value: `http://${LAN_GATEWAY}:${port}` },
    { name: "AWS_ACCESS_KEY_ID", value: "test" },
    { name: "AWS_SECRET_ACCESS_KEY", value: "test" },
  ];
  const objects = await installPortico(ns.context.kubeconfig, {
    overlay: "eks",
    image: ns.context.porticoImage,
    kustomization: {
      namespace: "portico-eks",
      namePrefix: "eks-",
      patches: [
        {
          target: { kind: "Deployment" },
          patch: JSON.stringify(
            env.map((value) => ({ op: "add", path: "/spec/template/spec/containers/0/env/-", value })),
          ),
        },
      ],
    },
  });
  onTestFinished(() => uninstall(ns.context.kubeconfig, objects));
  return aws;
}
