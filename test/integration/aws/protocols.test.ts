// Listener protocols, TLS, attributes, source ranges and scheme: what the annotations users already have ask for.
import { CreateTagsCommand } from "@aws-sdk/client-ec2";
import { DescribeLoadBalancersCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { importCertificate } from "../../harness/acmCertificates.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, patchService, serviceEvents, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

test("a TCP and a UDP port with the same number share one TCP_UDP listener; UDP alone gets UDP", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const svc = await cluster.createService(
    "dns",
    lbService([
      { name: "dns-tcp", port: 53, protocol: "TCP" },
      { name: "dns-udp", port: 53, protocol: "UDP" },
      { name: "syslog", port: 514, protocol: "UDP" },
    ]),
  );
  // The apiserver gives a TCP and a UDP port of the same number the same nodePort.
  expect(svc.spec!.ports![0]!.nodePort).toBe(svc.spec!.ports![1]!.nodePort);
  await waitForHostname(cluster, "dns");
  const inv = await inventory(aws);
  const listeners = inv.loadBalancers[0]!.listeners.map((l) => [l.port, l.protocol]).sort();
  expect(listeners).toEqual([
    [514, "UDP"],
    [53, "TCP_UDP"],
  ]);
  const udp = inv.targetGroups.find((tg) => tg.protocol === "UDP")!;
  // A UDP node port cannot answer a TCP check: kube-proxy's health endpoint stands in.
  expect(udp.healthCheck).toEqual({ protocol: "HTTP", port: "10256", path: "/healthz" });
  expect(inv.securityGroups[0]!.ingress).toEqual([
    "tcp/53/0.0.0.0/0",
    "udp/514/0.0.0.0/0",
    "udp/53/0.0.0.0/0",
  ]);
});

test("a certificate annotation makes TLS listeners on the chosen ports only", async ({ cluster, aws }) => {
  await awsWorld(cluster, aws, 1);
  const cert = await importCertificate("web.example.com");
  await cert.remove();
  await startPortico(cluster);
  await cluster.createService(
    "web",
    lbService([
      { name: "http", port: 80, targetPort: 8080 },
      { name: "https", port: 443, targetPort: 8080 },
    ]),
    { [`${A}ssl-cert`]: cert.arn, [`${A}ssl-ports`]: "https" },
  );
  await waitForHostname(cluster, "web");
  const inv = await inventory(aws);
  const byPort = Object.fromEntries(inv.loadBalancers[0]!.listeners.map((l) => [l.port, l]));
  expect(byPort[443]).toMatchObject({ protocol: "TLS", certificates: [cert.arn] });
  expect(byPort[80]).toMatchObject({ protocol: "TCP", certificates: [] });
  expect(inv.targetGroups.every((tg) => tg.protocol === "TCP")).toBe(true);
});

test("attribute annotations set proxy protocol, deregistration delay and cross-zone; removing them restores the defaults", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService(), {
    [`${A}proxy-protocol`]: "*",
    [`${A}target-group-attributes`]: "deregistration_delay.timeout_seconds=30",
  });
  await waitForHostname(cluster, "web");
  let tg = (await inventory(aws)).targetGroups[0]!;
  expect(tg.attributes).toMatchObject({
    "proxy_protocol_v2.enabled": "true",
    "deregistration_delay.timeout_seconds": "30",
  });
  await patchService(cluster, "web", {
    metadata: { annotations: { [`${A}proxy-protocol`]: null, [`${A}target-group-attributes`]: null } },
  });
  await waitFor(
    "default attributes again",
    async () => (await inventory(aws)).targetGroups[0]!.attributes["proxy_protocol_v2.enabled"] === "false",
  );
  tg = (await inventory(aws)).targetGroups[0]!;
  expect(tg.attributes["deregistration_delay.timeout_seconds"]).toBe("300");
});

test("sessionAffinity ClientIP turns on source-IP stickiness; None turns it off", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService(undefined, { sessionAffinity: "ClientIP" }));
  await waitForHostname(cluster, "web");
  expect((await inventory(aws)).targetGroups[0]!.attributes).toMatchObject({
    "stickiness.enabled": "true",
    "stickiness.type": "source_ip",
  });
  await patchService(cluster, "web", { spec: { sessionAffinity: "None" } });
  await waitFor(
    "stickiness off",
    async () => (await inventory(aws)).targetGroups[0]!.attributes["stickiness.enabled"] === "false",
  );
});

test("loadBalancerSourceRanges become the only ingress rules of the NLB's security group, and follow changes", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService(
    "web",
    lbService(undefined, { loadBalancerSourceRanges: ["203.0.113.0/24", "198.51.100.7/32"] }),
  );
  await waitForHostname(cluster, "web");
  expect((await inventory(aws)).securityGroups[0]!.ingress).toEqual([
    "tcp/80/198.51.100.7/32",
    "tcp/80/203.0.113.0/24",
  ]);
  await patchService(cluster, "web", { spec: { loadBalancerSourceRanges: ["192.0.2.0/24"] } });
  await waitFor(
    "the new range only",
    async () => (await inventory(aws)).securityGroups[0]!.ingress.join() === "tcp/80/192.0.2.0/24",
  );
});

test("changing the scheme replaces the NLB make-before-break and says so", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  // Public subnets too, for the internet-facing load balancer.
  await aws.createNetworkSubnetsForRole(world.network.vpcId, cluster.namespace, "kubernetes.io/role/elb");
  await startPortico(cluster);
  await cluster.createService("web", lbService());
  const before = await waitForHostname(cluster, "web");
  await patchService(cluster, "web", { metadata: { annotations: { [`${A}scheme`]: "internet-facing" } } });
  const after = await waitFor("a new hostname", async () => {
    const h = (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.hostname;
    return h !== before ? h : undefined;
  });
  await waitFor("the old NLB to be gone", async () => (await inventory(aws)).loadBalancers.length === 1);
  const inv = await inventory(aws);
  expect(inv.loadBalancers[0]).toMatchObject({ scheme: "internet-facing", dnsName: after });
  expect(inv.targetGroups).toHaveLength(1);
  expect(inv.loadBalancers[0]!.listeners[0]!.targetGroupArn).toBe(inv.targetGroups[0]!.arn);
  const events = await serviceEvents(cluster, "web");
  expect(
    events.some((e) => e.reason === "ReplacingLoadBalancer" && e.message.includes("cannot change in place")),
  ).toBe(true);
});

test("subnets named by ID or Name tag are used instead of discovery, and changed in place", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const [first, second] = world.network.subnets;
  await aws.ec2.send(
    new CreateTagsCommand({ Resources: [second!.subnetId], Tags: [{ Key: "Name", Value: "edge-b" }] }),
  );
  await startPortico(cluster);
  await cluster.createService("web", lbService(), { [`${A}subnets`]: `${first!.subnetId}, edge-b` });
  await waitForHostname(cluster, "web");
  const subnets = async () => {
    const lbs = (await aws.elbv2.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
    expect(lbs).toHaveLength(1);
    return lbs[0]!.AvailabilityZones!.map((z) => z.SubnetId!).sort();
  };
  expect(await subnets()).toEqual([first!.subnetId, second!.subnetId].sort());
  const [third] = await aws.createNetworkSubnetsForRole(world.network.vpcId, "elsewhere", "unused", [
    "us-east-1c",
  ]);
  await patchService(cluster, "web", {
    metadata: { annotations: { [`${A}subnets`]: `${first!.subnetId},${third!.subnetId}` } },
  });
  await waitFor(
    "the subnets to change in place",
    async () => (await subnets()).join() === [first!.subnetId, third!.subnetId].sort().join(),
  );
});
