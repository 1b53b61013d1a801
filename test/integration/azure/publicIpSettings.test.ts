// What a Service asks of its public IP and its rules with cloud-provider-azure's annotations, checked in ARM:
// a DNS label (set, changed, removed, unique per region), IP tags fixed at creation, TCP resets off, and the
// cluster-wide floating IP default for clusters moving over from cloud-provider-azure.
import { AZURE_WORLD, expect, expectRefused, test, waitFor, waitForNotReady } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureTestConfig } from "../../harness/azure.ts";
import { azureWorld, lbService, patchService, serviceEvents, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/";
const DNS = `${A}azure-dns-label-name`;
const IP_TAGS = `${A}azure-pip-ip-tags`;
/** A DNS label unique to the test: ARM's rule allows 63 characters, not ending with "-". */
const dnsLabel = (prefix: string, namespace: string) =>
  `${prefix}-${namespace}`.slice(0, 60).toLowerCase().replace(/-+$/, "");
const fqdnOf = (label: string) => `${label}.${AZURE_WORLD.location}.cloudapp.azure.com`;

test("a DNS label is set on Portico's public IP, changed and removed with the annotation, the address kept and the status the address alone", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const label = dnsLabel("web", cluster.namespace);
  await cluster.createService("web", lbService(), { [DNS]: label });
  const ip = await waitForIP(cluster, "web");
  let pips = (await inventory(azure)).publicIps;
  expect(pips).toHaveLength(1);
  expect(pips[0]).toMatchObject({ address: ip, fqdn: fqdnOf(label) });
  // cloud-provider-azure writes the address only; the name is on the public IP (and in porticoctl status).
  expect((await cluster.getService("web")).status?.loadBalancer?.ingress).toEqual([{ ip, ipMode: "VIP" }]);

  await patchService(cluster, "web", { metadata: { annotations: { [DNS]: `${label}-2`.slice(0, 63) } } });
  await waitFor(
    "the new label",
    async () => (await inventory(azure)).publicIps[0]?.fqdn === fqdnOf(`${label}-2`.slice(0, 63)),
  );
  await patchService(cluster, "web", { metadata: { annotations: { [DNS]: null } } });
  await waitFor("no label", async () => (await inventory(azure)).publicIps[0]?.fqdn === undefined);
  pips = (await inventory(azure)).publicIps;
  expect(pips.map((p) => p.address)).toEqual([ip]);
});

test("a DNS label another public IP of the region holds is refused with ARM's reason, and the first Service keeps it", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const label = dnsLabel("shared", cluster.namespace);
  await cluster.createService("first", lbService(), { [DNS]: label });
  await waitForIP(cluster, "first");
  await cluster.createService("second", lbService(), { [DNS]: label });
  // ARM decides (the label may be held in any resource group or subscription): its refusal is shown as it is.
  const condition = await waitForNotReady(cluster, "second");
  expect(condition).toMatchObject({ reason: "CloudRejected" });
  expect(condition.message).toContain(`DnsRecordInUse: DNS record ${fqdnOf(label)} is already used`);
  await waitFor("a Warning Event", async () =>
    (await serviceEvents(cluster, "second")).some(
      (e) => e.type === "Warning" && e.message.includes("DnsRecordInUse"),
    ),
  );
  const inv = await inventory(azure);
  expect(inv.publicIps.map((p) => p.fqdn)).toEqual([fqdnOf(label)]);
  expect(inv.loadBalancers[0]!.frontends).toHaveLength(1);
});

test("IP tags are set when Portico makes the public IP; a later change is refused and the public IP kept as it is", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService(), { [IP_TAGS]: "RoutingPreference=Internet" });
  const ip = await waitForIP(cluster, "web");
  expect((await inventory(azure)).publicIps).toMatchObject([
    { address: ip, ipTags: ["RoutingPreference=Internet"] },
  ]);

  await patchService(cluster, "web", { metadata: { annotations: { [IP_TAGS]: null } } });
  await expectRefused(cluster, "web", {
    reason: "PublicIPTagsImmutable",
    mentions: [IP_TAGS, "RoutingPreference=Internet", "re-create the Service"],
  });
  expect((await inventory(azure)).publicIps).toMatchObject([
    { address: ip, ipTags: ["RoutingPreference=Internet"] },
  ]);
});

test("TCP resets can be turned off per Service, and back on", async ({ cluster, azure }) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService(), { [`${A}azure-load-balancer-disable-tcp-reset`]: "true" });
  await waitForIP(cluster, "web");
  expect((await inventory(azure)).loadBalancers[0]!.rules.map((r) => r.tcpReset)).toEqual([false]);
  await patchService(cluster, "web", {
    metadata: { annotations: { [`${A}azure-load-balancer-disable-tcp-reset`]: null } },
  });
  await waitFor("resets on", async () => (await inventory(azure)).loadBalancers[0]!.rules[0]!.tcpReset);
});

test("with floatingIPDefault the cluster's Services get floating IP as under cloud-provider-azure, and the disable annotation still turns it off", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure", settings: azureTestConfig({ floatingIPDefault: true }) });
  await cluster.createService("moved", lbService());
  await cluster.createService(
    "off",
    lbService([{ name: "http", port: 81, targetPort: 8080, protocol: "TCP" }]),
    {
      [`${A}azure-disable-load-balancer-floating-ip`]: "true",
    },
  );
  const ip = await waitForIP(cluster, "moved");
  await waitForIP(cluster, "off");
  const byPort = new Map((await inventory(azure)).loadBalancers[0]!.rules.map((r) => [r.frontendPort, r]));
  expect(byPort.get(80)).toMatchObject({ floatingIP: true, backendPort: 80 });
  expect(byPort.get(81)).toMatchObject({ floatingIP: false });
  expect(byPort.get(81)!.backendPort).not.toBe(81);
  // With floating IP the allow rule is to the frontend's own address on the Service port.
  await waitFor("the rule to the frontend", async () =>
    (await inventory(azure)).securityRules.some((r) => r.destinations[0] === ip && r.port === "80"),
  );
});

test("a public IP prefix gives Portico's public IPs addresses inside it; a full prefix refuses the next Service with ARM's reason", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const prefix = await azure.network.publicIPPrefixes.createOrUpdate(
    azure.resourceGroup,
    "services",
    {
      location: AZURE_WORLD.location,
      sku: { name: "Standard" },
      prefixLength: 31,
      publicIPAddressVersion: "IPv4",
    },
    { updateIntervalInMs: 20 },
  );
  const [base, length] = prefix.ipPrefix!.split("/");
  expect(length).toBe("31");
  const inside = (ip: string) =>
    ip.split(".").slice(0, 3).join(".") === base!.split(".").slice(0, 3).join(".");
  await startPortico(cluster, { provider: "azure" });
  const annotations = { [`${A}azure-pip-prefix-id`]: prefix.id! };
  await cluster.createService("one", lbService(), annotations);
  await cluster.createService(
    "two",
    lbService([{ name: "http", port: 81, targetPort: 8080, protocol: "TCP" }]),
    annotations,
  );
  const ips = [await waitForIP(cluster, "one"), await waitForIP(cluster, "two")];
  expect(ips.every(inside)).toBe(true);
  expect(new Set(ips).size).toBe(2);

  await cluster.createService(
    "three",
    lbService([{ name: "http", port: 82, targetPort: 8080, protocol: "TCP" }]),
    annotations,
  );
  const condition = await waitForNotReady(cluster, "three");
  expect(condition).toMatchObject({ reason: "CloudRejected" });
  expect(condition.message).toContain("PublicIpPrefixOutOfIpAddresses");
  const inv = await inventory(azure);
  expect(inv.publicIps.map((p) => p.address).sort()).toEqual([...ips].sort());
  expect(inv.loadBalancers[0]!.frontends).toHaveLength(2);

  // Deleting a Service returns its address to the prefix; the refused Service gets it on its next reconcile
  // (ARM's refusal is not retried on a timer: a change to the Service, or the resync, brings it back).
  await cluster.core.deleteNamespacedService({ name: "one", namespace: cluster.namespace });
  await waitFor("the first public IP gone", async () => (await inventory(azure)).publicIps.length === 1);
  await patchService(cluster, "three", { metadata: { annotations: { "example.com/retry": "1" } } });
  expect(await waitForIP(cluster, "three")).toBe(ips[0]);
});
