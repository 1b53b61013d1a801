// EC2 refuses an inbound rule past a security group's quota (the emulator as AWS does, RulesPerSecurityGroupLimitExceeded
// at 60), after the NLB's group holds the rules that fitted. Portico counts the rules before any call: a Service that
// needs more is refused with a Warning Event and a False condition naming the field that brings them, the count and
// the limit, and nothing is made; one that fits gets every rule.
import { expect, expectRefused, test } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const ranges = (n: number) =>
  Array.from({ length: n }, (_, i) => `10.${100 + Math.floor(i / 256)}.${i % 256}.0/24`);
const WEB = [
  { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
  { name: "https", port: 443, targetPort: 8443, protocol: "TCP" },
];

test("source ranges past a security group's rule quota are refused before anything is made; those that fit are all written", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);

  await cluster.createService("two-ports", lbService(WEB, { loadBalancerSourceRanges: ranges(31) }));
  await expectRefused(cluster, "two-ports", {
    reason: "TooManySecurityGroupRules",
    mentions: [
      "spec.loadBalancerSourceRanges",
      "62 inbound IPv4 rules",
      "holds 60 per address family (--aws-rules-per-security-group)",
    ],
  });
  // The ranges given by the annotation (the spec gives none): the annotation is the field named.
  await cluster.createService("annotated", lbService(), {
    "service.beta.kubernetes.io/load-balancer-source-ranges": ranges(70).join(","),
  });
  await expectRefused(cluster, "annotated", {
    reason: "TooManySecurityGroupRules",
    mentions: [
      "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]",
      "70 inbound IPv4 rules",
    ],
  });
  await cluster.createService("wide", lbService(undefined, { loadBalancerSourceRanges: ranges(1500) }));
  await expectRefused(cluster, "wide", {
    reason: "TooManySecurityGroupRules",
    mentions: ["1500 inbound IPv4 rules"],
  });
  // Nothing half-made: no security group holding the rules that fitted, no NLB.
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });

  await cluster.createService("fits", lbService(WEB, { loadBalancerSourceRanges: ranges(30) }));
  await waitForHostname(cluster, "fits");
  const inv = await inventory(aws);
  expect(inv.securityGroups).toHaveLength(1);
  expect(inv.securityGroups[0]!.ingress).toHaveLength(60);
});
