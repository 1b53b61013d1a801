// `porticoctl migrate` against the real apiserver and AWS emulator: per Service, what the take-over will adopt,
// keep, recreate or refuse, before anything changes, and then what the controller does is what it said.
import { CustomObjectsApi } from "@kubernetes/client-node";
import { inject } from "vitest";
import { LBC_NLB_CLASS } from "../../../providers/classes.ts";
import { main } from "../../../controller/cli/porticoctl.ts";
import { LBC_FINALIZER } from "../../../providers/aws/lbc/adoption.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { leadingController } from "./leadingController.ts";
import { installCrds } from "../../harness/manifests.ts";
import { awsWorld, lbService } from "../aws/fixtures.ts";
import { inventory } from "../aws/inventory.ts";
import { lbcLease, lbcService, lbcStack, tagsOf } from "../aws/lbcAdoptionWorld.ts";

const LEASE = "aws-load-balancer-controller-leader";
const TGB_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "targetgroupbindings.elbv2.k8s.aws" },
  spec: {
    group: "elbv2.k8s.aws",
    scope: "Namespaced",
    names: { plural: "targetgroupbindings", singular: "targetgroupbinding", kind: "TargetGroupBinding" },
    versions: [
      {
        name: "v1beta1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            // The client's model name for x-kubernetes-preserve-unknown-fields (it serialises by its model).
            properties: { spec: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
          },
        },
      },
    ],
  },
};
const SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme";

async function ctl(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main([...args, "--kubeconfig", inject("kubeconfig")], (s) => (out += s));
  return { code, out };
}

test("migrate says per Service what will be adopted in place, recreated or refused and why, changes nothing, and the controller then does what it said", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2, { internetFacing: true });
  const ns = cluster.namespace;
  const web = await lbcService(cluster, "web");
  const webStack = await lbcStack(aws, world, web, { lbcCluster: ns, targets: world.instances });
  // LBC made it internal; the Service now asks for internet-facing, which no NLB can change to.
  const pub = await lbcService(cluster, "public", { [SCHEME]: "internet-facing" });
  const pubStack = await lbcStack(aws, world, pub, { lbcCluster: ns, targets: world.instances });
  await cluster.createService("mine", lbService());
  // LBC's TargetGroupBinding for web, under LBC's CRD (the fields read here only).
  await installCrds(cluster.kubeConfig, [TGB_CRD]);
  await cluster.kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: "elbv2.k8s.aws",
    version: "v1beta1",
    namespace: ns,
    plural: "targetgroupbindings",
    body: {
      apiVersion: "elbv2.k8s.aws/v1beta1",
      kind: "TargetGroupBinding",
      metadata: { name: "k8s-web-binding" },
      spec: { serviceRef: { name: "web", port: 80 }, targetGroupARN: webStack.targetGroupArn },
    },
  });
  const tagsBefore = await tagsOf(aws, webStack.loadBalancerArn);
  const args = ["migrate", "-n", ns, "--cluster-name", ns, "--lbc-lease", `${ns}/${LEASE}`];

  const text = await ctl(...args);
  expect(text.code).toBe(0);
  expect(text.out).toContain(`${ns}/web  adopt`);
  expect(text.out).toContain(
    `adopt NLB ${webStack.loadBalancerArn} (the AWS Load Balancer Controller's) in place: ${webStack.dnsName} stays`,
  );
  expect(text.out).toMatch(/adopt target group k8s-\S+ \(port 80, 2 targets\) in place/);
  expect(text.out).toContain(`keep security group ${webStack.securityGroupId} as it is`);
  expect(text.out).toContain(`keep TargetGroupBinding ${ns}/k8s-web-binding as it is`);
  expect(text.out).toContain(`${ns}/public  recreate`);
  expect(text.out).toContain(`recreate: NLB ${pubStack.loadBalancerArn}`);
  expect(text.out).toContain("it is internal and the Service asks for internet-facing");
  expect(text.out).toContain("refused until the controller runs with --aws-take-over-lbc-recreate");
  expect(text.out).toContain(`${ns}/mine  change`);
  expect(text.out).toMatch(/create internal NLB k8s-/);

  // As a controller with --aws-take-over-lbc-recreate would: a new NLB beside LBC's, which stays as it is.
  const recreate = await ctl(...args, "--allow-recreate", "-o", "json");
  const rows = JSON.parse(recreate.out) as { service: string; verdict: string; lines: string[] }[];
  const publicRow = rows.find((r) => r.service === `${ns}/public`)!;
  expect(publicRow.verdict).toBe("recreate");
  expect(publicRow.lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^keep NLB k8s-\S+ as it is \(not Portico's/),
      expect.stringMatching(/^create internet-facing NLB k8s-/),
    ]),
  );

  // LBC still running: every Service it serves is refused, and the exit code says something is wrong.
  await lbcLease(cluster, LEASE, "aws-load-balancer-controller-5c6d-xyz");
  const refused = await ctl(...args);
  expect(refused.code).toBe(1);
  expect(refused.out).toContain(`${ns}/web  refuse`);
  expect(refused.out).toContain(`${ns}/public  refuse`);
  expect(refused.out).toContain("aws-load-balancer-controller-5c6d-xyz");
  expect(refused.out).toContain(`${ns}/mine  change`);

  // A dry run: nothing was touched.
  expect(await tagsOf(aws, webStack.loadBalancerArn)).toEqual(tagsBefore);
  expect((await inventory(aws)).loadBalancers).toHaveLength(2);

  // The controller does what migrate said: web adopted in place; afterwards migrate says Portico keeps it.
  await cluster.coordination.deleteNamespacedLease({ name: LEASE, namespace: ns });
  await leadingController(cluster, "portico-controller", {
    alsoServes: [LBC_NLB_CLASS],
    settings: {
      defaultScheme: "internal",
      observationTtlMs: 60_000,
      takeOverLbc: { cluster: ns, recreate: false, lease: { namespace: ns, name: LEASE } },
    },
  });
  await waitFor("web to be taken over", async () => {
    const svc = await cluster.getService("web");
    return svc.status?.loadBalancer?.ingress?.[0]?.hostname === webStack.dnsName &&
      !svc.metadata?.finalizers?.includes(LBC_FINALIZER)
      ? true
      : undefined;
  });
  const after = await waitFor("migrate to find nothing left to do for web", async () => {
    const r = await ctl(...args, "-o", "json");
    const row = (JSON.parse(r.out) as { service: string; verdict: string; lines: string[] }[]).find(
      (x) => x.service === `${ns}/web`,
    )!;
    if (row.lines.length !== 2) throw new Error(`migrate says of web:\n${row.lines.join("\n")}`);
    return row;
  });
  expect(after.verdict).toBe("keep");
  expect(after.lines).toEqual([
    `keep NLB ${webStack.loadBalancerArn} (Portico's): ${webStack.dnsName} stays`,
    expect.stringMatching(new RegExp(`^keep TargetGroupBinding ${ns}/k8s-web-binding as it is`)),
  ]);
  // Above the three waits' 20 s each, so a slow step fails naming itself: ten seconds alone, several times that in a
  // full run on two cores (once over 60 s in CI with no wait timed out).
}, 150_000);
