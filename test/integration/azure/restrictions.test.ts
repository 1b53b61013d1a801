// Restricting who reaches a Service with cloud-provider-azure's annotations: azure-allowed-ip-ranges and
// azure-allowed-service-tags become allow rules for exactly those sources (and none for Internet),
// azure-deny-all-except-load-balancer-source-ranges adds a Deny rule below them, and
// azure-disable-load-balancer-nsg-rule leaves the security group to the user. Checked in ARM's own state.
import { AZURE_WORLD, expect, expectRefused, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, waitForIP } from "./fixtures.ts";
import { inventory, type Inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/";
const RANGES = `${A}azure-allowed-ip-ranges`;
const TAGS = `${A}azure-allowed-service-tags`;
const DENY = `${A}azure-deny-all-except-load-balancer-source-ranges`;
const NO_RULES = `${A}azure-disable-load-balancer-nsg-rule`;
const FLOATING = `${A}azure-disable-load-balancer-floating-ip`;

type Rule = Inventory["securityRules"][number];
const shape = ({ name, access, sources, destinations, port }: Rule) => ({
  name,
  access,
  sources,
  destinations,
  port,
});
/** Whether a rule lets anyone on the Internet in (what a restricted Service must not have). */
const opensToEveryone = (r: Rule) =>
  r.access === "Allow" && r.sources.some((s) => s === "Internet" || s === "*" || s === "0.0.0.0/0");

test("allowed IP ranges and service tags allow exactly those sources to the frontend, and deny-all shuts out everyone else below them", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService(), {
    [RANGES]: "203.0.113.0/24, 198.51.100.7/32",
    [TAGS]: "AzureFrontDoor.Backend",
    [DENY]: "true",
    // cloud-provider-azure's default: rules to the frontend's own address.
    [FLOATING]: "false",
  });
  const fe = `a${svc.metadata!.uid!.replace(/-/g, "")}`;
  const ip = await waitForIP(cluster, "web");
  await waitFor("the rules", async () => (await inventory(azure)).securityRules.length === 3);
  const rules = (await inventory(azure)).securityRules;
  expect(rules.map(shape)).toEqual([
    {
      name: `${fe}-TCP-80`,
      access: "Allow",
      sources: ["198.51.100.7/32", "203.0.113.0/24"],
      destinations: [ip],
      port: "80",
    },
    {
      name: `${fe}-TCP-80-AzureFrontDoor.Backend`,
      access: "Allow",
      sources: ["AzureFrontDoor.Backend"],
      destinations: [ip],
      port: "80",
    },
    { name: `${fe}-TCP-80-deny-all`, access: "Deny", sources: ["*"], destinations: [ip], port: "80" },
  ]);
  expect(rules.filter(opensToEveryone)).toEqual([]);
  // Deny sits below both allows (a higher number is evaluated later), at the top of Portico's range.
  const [allowRanges, allowTag, deny] = rules;
  expect(deny!.priority).toBe(4095);
  expect(deny!.priority).toBeGreaterThan(Math.max(allowRanges!.priority, allowTag!.priority));

  // Without deny-all the allows stay, in place; the Deny rule goes.
  await patchService(cluster, "web", { metadata: { annotations: { [DENY]: null } } });
  await waitFor("no deny rule", async () => (await inventory(azure)).securityRules.length === 2);
  const after = (await inventory(azure)).securityRules;
  expect(after.map((r) => [r.name, r.priority])).toEqual([
    [allowRanges!.name, allowRanges!.priority],
    [allowTag!.name, allowTag!.priority],
  ]);

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("no rules", async () => (await inventory(azure)).securityRules.length === 0);
});

test("deny-all without floating IP keeps Azure's health probes in, and an internal Service is restricted the same way", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService(
    "web",
    lbService(undefined, { loadBalancerSourceRanges: ["10.1.0.0/16"] }),
    { [DENY]: "true", [`${A}azure-load-balancer-internal`]: "true" },
  );
  const fe = `a${svc.metadata!.uid!.replace(/-/g, "")}`;
  const nodePort = String(svc.spec!.ports![0]!.nodePort);
  await waitForIP(cluster, "web");
  await waitFor("the rules", async () => (await inventory(azure)).securityRules.length === 3);
  const rules = (await inventory(azure)).securityRules;
  const backends = [AZURE_WORLD.subnetPrefix];
  expect(rules.map(shape)).toEqual([
    {
      name: `${fe}-TCP-80`,
      access: "Allow",
      sources: ["10.1.0.0/16"],
      destinations: backends,
      port: nodePort,
    },
    {
      name: `${fe}-TCP-80-AzureLoadBalancer`,
      access: "Allow",
      sources: ["AzureLoadBalancer"],
      destinations: backends,
      port: nodePort,
    },
    { name: `${fe}-TCP-80-deny-all`, access: "Deny", sources: ["*"], destinations: backends, port: nodePort },
  ]);
  expect(rules.some((r) => r.sources.includes("VirtualNetwork"))).toBe(false);
});

test("allowed IP ranges together with loadBalancerSourceRanges are refused before anything is made, as cloud-provider-azure refuses them", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService(
    "both",
    lbService(undefined, { loadBalancerSourceRanges: ["203.0.113.0/24"] }),
    { [RANGES]: "198.51.100.0/24" },
  );
  await cluster.createService("lonely", lbService(), { [DENY]: "true" });
  await expectRefused(cluster, "both", { reason: "InvalidAnnotation", mentions: [RANGES, "one place"] });
  await expectRefused(cluster, "lonely", {
    reason: "InvalidAnnotation",
    mentions: [DENY, "list the allowed ranges"],
  });
  expect(await inventory(azure)).toEqual({ loadBalancers: [], publicIps: [], securityRules: [] });
});

test("disabling the Service's security rules removes them and keeps the Service served; enabling brings them back", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  const ip = await waitForIP(cluster, "web");
  await waitFor("the allow rule", async () => (await inventory(azure)).securityRules.length === 1);

  await patchService(cluster, "web", { metadata: { annotations: { [NO_RULES]: "true" } } });
  await waitFor("no rules", async () => (await inventory(azure)).securityRules.length === 0);
  const inv = await inventory(azure);
  expect(inv.loadBalancers[0]!.rules).toHaveLength(1);
  expect((await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ip);

  // Ranges cannot be enforced without rules: refused rather than ignored.
  await patchService(cluster, "web", { spec: { loadBalancerSourceRanges: ["203.0.113.0/24"] } });
  await expectRefused(cluster, "web", {
    reason: "InvalidAnnotation",
    mentions: [NO_RULES, "spec.loadBalancerSourceRanges"],
  });
  expect((await inventory(azure)).securityRules).toEqual([]);

  await patchService(cluster, "web", { metadata: { annotations: { [NO_RULES]: null } } });
  await waitFor("the range's rule", async () => {
    const rules = (await inventory(azure)).securityRules;
    return rules.length === 1 && rules[0]!.sources[0] === "203.0.113.0/24";
  });
});
