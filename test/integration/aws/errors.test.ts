// Bad input: a clear Warning Event and condition naming the field and the fix, nothing half-made in the
// cloud, and every other Service unaffected.
import { expect, expectRefused, readyCondition, test } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, patchService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const TARGET_TYPE = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type";

test("allocateLoadBalancerNodePorts: false with instance targets named is refused and nothing is created; without a target type it gets ip targets", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("good", lbService());
  await cluster.createService(
    "no-nodeports",
    lbService(undefined, { allocateLoadBalancerNodePorts: false }),
    {
      [TARGET_TYPE]: "instance",
    },
  );
  await expectRefused(cluster, "no-nodeports", {
    reason: "NodePortsDisabled",
    mentions: ["spec.allocateLoadBalancerNodePorts", "aws-load-balancer-nlb-target-type: ip"],
  });
  await waitForHostname(cluster, "good");
  const inv = await inventory(aws);
  expect(inv.loadBalancers.map((lb) => lb.tags["portico.io/service"])).toEqual([`${cluster.namespace}/good`]);
  expect(inv.targetGroups).toHaveLength(1);
  expect(inv.securityGroups).toHaveLength(1);

  await cluster.createEndpointSlice(
    "no-nodeports",
    [{ ip: "10.0.0.80", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  // The annotation removed, no target type is named: with no node ports, ip targets are the only ones that work.
  await patchService(cluster, "no-nodeports", { metadata: { annotations: { [TARGET_TYPE]: null } } });
  await waitForHostname(cluster, "no-nodeports");
  expect(await readyCondition(cluster, "no-nodeports")).toMatchObject({
    status: "True",
    reason: "Provisioned",
  });
  const after = await inventory(aws);
  const ipGroup = after.targetGroups.find((tg) => tg.targetType === "ip");
  expect(ipGroup?.targets).toEqual(["10.0.0.80:8080"]);
});

test.for([
  ["an unknown target type", { [TARGET_TYPE]: "pod" }, "InvalidAnnotation", TARGET_TYPE],
  [
    "a scheme that does not exist",
    { "service.beta.kubernetes.io/aws-load-balancer-scheme": "public" },
    "InvalidAnnotation",
    "aws-load-balancer-scheme",
  ],
  [
    "a health check interval out of range",
    { "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "1" },
    "InvalidAnnotation",
    "healthcheck-interval",
  ],
  [
    "a timeout longer than the interval",
    {
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "10",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-timeout": "20",
    },
    "InvalidHealthCheck",
    "healthcheck-timeout",
  ],
  [
    "target group attributes that are not key=value",
    { "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes": "deregistration_delay" },
    "InvalidAnnotation",
    "target-group-attributes",
  ],
  [
    "an IP address type NLBs do not have",
    { "service.beta.kubernetes.io/aws-load-balancer-ip-address-type": "ipv6" },
    "InvalidAnnotation",
    "ip-address-type",
  ],
  [
    "a certificate that is not an ARN",
    { "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": "my-cert" },
    "InvalidAnnotation",
    "aws-load-balancer-ssl-cert",
  ],
  [
    "proxy protocol for some ports only",
    { "service.beta.kubernetes.io/aws-load-balancer-proxy-protocol": "80" },
    "InvalidAnnotation",
    "aws-load-balancer-proxy-protocol",
  ],
  [
    "subnets that do not exist",
    { "service.beta.kubernetes.io/aws-load-balancer-subnets": "subnet-00000000" },
    "SubnetNotFound",
    "aws-load-balancer-subnets",
  ],
  [
    "a target-node selector that does not parse",
    { "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "a in (b" },
    "InvalidTargetNodeLabels",
    "target-node-labels",
  ],
] as const)(
  "%s is reported on the Service, naming the field, and nothing is created",
  async ([, annotations, reason, field], { cluster, aws }) => {
    await awsWorld(cluster, aws, 1);
    await startPortico(cluster);
    await cluster.createService("bad", lbService(), annotations);
    await expectRefused(cluster, "bad", { reason, mentions: [field] });
    expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
  },
);

test("more ports than an NLB has listeners, and SCTP, are refused before any call", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const ports = Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, port: 1000 + i, protocol: "TCP" }));
  await cluster.createService("huge", lbService(ports));
  await cluster.createService("sctp", lbService([{ name: "s", port: 9000, protocol: "SCTP" }]));
  await expectRefused(cluster, "huge", { reason: "TooManyListeners", mentions: [] });
  await expectRefused(cluster, "sctp", {
    reason: "UnsupportedProtocol",
    mentions: ["spec.ports[0].protocol"],
  });
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
});
