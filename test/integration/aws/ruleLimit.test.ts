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

test("a managed prefix list weighs its maximum entries; one that does not exist is named", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const { CreateManagedPrefixListCommand } = await import("@aws-sdk/client-ec2");
  const list = async (name: string, max: number) =>
    (
      await aws.ec2.send(
        new CreateManagedPrefixListCommand({ PrefixListName: name, MaxEntries: max, AddressFamily: "IPv4" }),
      )
    ).PrefixList!.PrefixListId!;
  const [offices, partners] = [await list("offices", 40), await list("partners", 10)];
  await startPortico(cluster);
  const P = "service.beta.kubernetes.io/aws-load-balancer-security-group-prefix-lists";

  // 40 entries on two ports are 80 of the group's 60 IPv4 rules, though Portico writes two.
  await cluster.createService("weighty", lbService(WEB), { [P]: offices });
  await expectRefused(cluster, "weighty", {
    reason: "TooManySecurityGroupRules",
    mentions: [
      `metadata.annotations[${P}]`,
      "80 inbound IPv4 rules",
      "prefix lists counted at their maximum entries",
    ],
  });
  await cluster.createService("missing", lbService(), { [P]: "pl-00000000000000000" });
  await expectRefused(cluster, "missing", {
    reason: "PrefixListNotFound",
    mentions: [`metadata.annotations[${P}]`, "pl-00000000000000000"],
  });
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });

  // 10 entries and 20 ranges on two ports: 60 rules' worth, which fits.
  await cluster.createService("fits", lbService(WEB, { loadBalancerSourceRanges: ranges(20) }), {
    [P]: partners,
  });
  await waitForHostname(cluster, "fits");
  expect((await inventory(aws)).securityGroups).toHaveLength(1);
});
