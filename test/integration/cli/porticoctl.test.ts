// porticoctl against the real apiserver and AWS emulator: what a person reads, and what a script parses.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inject } from "vitest";
import { main } from "../../../controller/cli/porticoctl.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "../aws/fixtures.ts";
import { leadingController } from "./leadingController.ts";
import { testTempDir } from "../../harness/tempDir.ts";

async function ctl(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main([...args, "--kubeconfig", inject("kubeconfig")], (s) => (out += s));
  return { code, out };
}

test("status shows each Service's NLB, listeners, target groups and target health; -o json for scripts", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await startPortico(cluster);
  // A ready endpoint, so that the Service serves (status exits non-zero for one that does not).
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.60", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  const hostname = await waitForHostname(cluster, "web");
  const text = await ctl("status", "-n", cluster.namespace);
  expect(text.code).toBe(0);
  expect(text.out).toContain(`${cluster.namespace}/web  aws  ${hostname}  Provisioned`);
  expect(text.out).toMatch(/NLB k8s-\S+ internal active/);
  expect(text.out).toContain("listener TCP:80");
  for (const i of world.instances) expect(text.out).toMatch(new RegExp(`${i.instanceId}:\\d+ healthy`));
  expect(text.out).not.toContain("\u001b["); // no colours when not on a terminal

  const json = await ctl("status", `${cluster.namespace}/web`, "-o", "json");
  const parsed = JSON.parse(json.out) as {
    service: string;
    addresses: string[];
    ready: string;
    cloud: unknown[];
  };
  expect(parsed).toMatchObject({ service: `${cluster.namespace}/web`, addresses: [hostname], ready: "True" });
  expect(parsed.cloud.length).toBeGreaterThan(0);
});

test("plan shows what would be made for a new Service, and nothing once it is in place", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const dir = testTempDir("portico-plan-");
  const file = join(dir, "svc.yaml");
  await writeFile(
    file,
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ${cluster.namespace}\nspec:\n  type: LoadBalancer\n  loadBalancerClass: portico.io/aws-nlb\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n`,
  );
  const before = await ctl("plan", "-f", file, "--cluster-name", cluster.namespace);
  expect(before.code).toBe(0);
  expect(before.out).toMatch(/create internal NLB k8s-/);
  expect(before.out).toMatch(/create TCP listener on port 80/);
  // A dry run: nothing exists afterwards.
  await expect(cluster.getService("web")).rejects.toMatchObject({ code: 404 });

  // Leading, as deployed: plan reads the controller's node selector from its Lease and so plans its targets.
  await leadingController(cluster, "portico-controller");
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await waitFor("the controller to settle", async () => {
    const plan = await ctl("plan", "-f", file, "--cluster-name", cluster.namespace);
    if (!plan.out.includes("nothing to do")) throw new Error(`porticoctl plan says:\n${plan.out}`);
    return true;
  });
});

test("doctor walks the chain: a healthy Service passes every check", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createPod("web-1", { labels: { app: "web" }, nodeName: world.nodes[0]!, podIP: "10.0.0.90" });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.90", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  const { code, out } = await ctl("doctor", `${cluster.namespace}/web`, "--cluster-name", cluster.namespace);
  expect(out).not.toContain("✗");
  expect(code).toBe(0);
  expect(out).toMatch(/✓ selector: selector app=web matches 1 pods, 1 Ready/);
  expect(out).toMatch(/✓ cloud targets: 1 of 1 targets healthy/);
});

test("doctor diagnoses the classic stories: EXTERNAL-IP <pending> and empty endpoints", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await cluster.createPod("api-1", { labels: { app: "api-v2" }, podIP: "10.0.0.91" });
  // No controller running: the Service stays <pending>.
  await cluster.createService("pending", lbService(undefined, { selector: { app: "api" } }));
  const pending = await ctl("doctor", `${cluster.namespace}/pending`, "--cluster-name", cluster.namespace);
  expect(pending.code).toBe(1);
  // Doctor reads leader Leases cluster-wide, and the tests share one apiserver: another test's controller may be
  // leading at this moment. Either way no controller took this Service on, and doctor says so.
  const controller =
    /✗ controller: (no Portico controller holds a fresh leader Lease|controllers are leading \(.+\) but none took this Service on)/;
  expect(pending.out).toMatch(controller);
  if (pending.out.includes("no Portico controller holds"))
    expect(pending.out).toMatch(/fix: deploy the controller/);
  expect(pending.out).toMatch(
    /✗ selector: selector app=api matches no pod; pods here are labelled app=api-v2/,
  );

  await cluster.createService(
    "local",
    lbService(undefined, { externalTrafficPolicy: "Local", selector: { app: "api-v2" } }),
  );
  const local = await ctl("doctor", `${cluster.namespace}/local`, "--cluster-name", cluster.namespace);
  expect(local.out).toMatch(
    /✗ health checks: externalTrafficPolicy Local: no target node has a ready endpoint/,
  );

  await cluster.createService("other", lbService(undefined, { loadBalancerClass: "example.com/lb" }));
  const other = await ctl("doctor", `${cluster.namespace}/other`);
  expect(other.out).toMatch(/✗ class: loadBalancerClass example.com\/lb is not one of Portico's/);

  const missing = await ctl("doctor", `${cluster.namespace}/nope`);
  expect(missing).toMatchObject({ code: 1 });
  expect(missing.out).toContain("does not exist");
  expect((await ctl("doctor")).code).toBe(2);
  expect((await ctl("status", "-o", "xml")).code).toBe(2);
});
