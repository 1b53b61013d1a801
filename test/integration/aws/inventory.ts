// Reads back everything in the AWS emulator (every page of it), so tests assert on the cloud itself, not on
// Portico's memory.
import { DescribeSecurityGroupsCommand } from "@aws-sdk/client-ec2";
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import type { TestAws } from "../../harness/index.ts";

export async function inventory(aws: TestAws) {
  const lbs = [];
  const tgs = [];
  let marker: string | undefined;
  do {
    const page = await aws.elbv2.send(
      new DescribeLoadBalancersCommand({ ...(marker ? { Marker: marker } : {}) }),
    );
    lbs.push(...(page.LoadBalancers ?? []));
    marker = page.NextMarker;
  } while (marker);
  do {
    const page = await aws.elbv2.send(
      new DescribeTargetGroupsCommand({ ...(marker ? { Marker: marker } : {}) }),
    );
    tgs.push(...(page.TargetGroups ?? []));
    marker = page.NextMarker;
  } while (marker);
  const loadBalancers = [];
  for (const lb of lbs) {
    const listeners =
      (await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.LoadBalancerArn })))
        .Listeners ?? [];
    const tags =
      (await aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: [lb.LoadBalancerArn!] })))
        .TagDescriptions?.[0]?.Tags ?? [];
    loadBalancers.push({
      name: lb.LoadBalancerName!,
      arn: lb.LoadBalancerArn!,
      dnsName: lb.DNSName!,
      scheme: lb.Scheme!,
      securityGroups: lb.SecurityGroups ?? [],
      tags: Object.fromEntries(tags.map((t) => [t.Key!, t.Value!])),
      listeners: listeners.map((l) => ({
        port: l.Port!,
        protocol: l.Protocol!,
        targetGroupArn: l.DefaultActions?.[0]?.TargetGroupArn,
        certificates: (l.Certificates ?? []).map((c) => c.CertificateArn),
      })),
    });
  }
  const targetGroups = [];
  for (const tg of tgs) {
    const health =
      (await aws.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tg.TargetGroupArn })))
        .TargetHealthDescriptions ?? [];
    const attrs =
      (await aws.elbv2.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: tg.TargetGroupArn })))
        .Attributes ?? [];
    targetGroups.push({
      name: tg.TargetGroupName!,
      arn: tg.TargetGroupArn!,
      protocol: tg.Protocol!,
      port: tg.Port!,
      targetType: tg.TargetType!,
      healthCheck: { protocol: tg.HealthCheckProtocol, port: tg.HealthCheckPort, path: tg.HealthCheckPath },
      attributes: Object.fromEntries(attrs.map((a) => [a.Key!, a.Value!])),
      targets: health
        .filter((h) => h.TargetHealth?.State !== "draining")
        .map((h) => `${h.Target!.Id}:${h.Target!.Port}`)
        .sort(),
    });
  }
  const groups =
    (
      await aws.ec2.send(
        new DescribeSecurityGroupsCommand({ Filters: [{ Name: "tag-key", Values: ["portico.io/cluster"] }] }),
      )
    ).SecurityGroups ?? [];
  // Each Service's own groups; the cluster's shared backend groups are apart (sharedGroups).
  const securityGroups = groups
    .filter((g) => !isShared(g))
    .map((g) => ({
      id: g.GroupId!,
      name: g.GroupName!,
      ingress: (g.IpPermissions ?? [])
        .flatMap((p) => (p.IpRanges ?? []).map((r) => `${p.IpProtocol}/${p.FromPort}/${r.CidrIp}`))
        .sort(),
    }));
  return { loadBalancers, targetGroups, securityGroups };
}

const isShared = (g: { Tags?: { Key?: string; Value?: string }[] }) =>
  g.Tags?.some((t) => t.Key === "portico.io/resource" && t.Value === "shared-backend-group") ?? false;

/** The cluster's shared backend groups (one per VPC, on every NLB whose backend rules Portico manages). */
export async function sharedGroups(aws: TestAws): Promise<{ id: string; vpcId: string }[]> {
  const out = await aws.ec2.send(
    new DescribeSecurityGroupsCommand({ Filters: [{ Name: "tag-key", Values: ["portico.io/cluster"] }] }),
  );
  return (out.SecurityGroups ?? []).filter(isShared).map((g) => ({ id: g.GroupId!, vpcId: g.VpcId! }));
}

/** Every ingress rule of a security group, as `protocol/port/source` (`from-to` for a range), with its tags and description. */
export async function groupRules(aws: TestAws, groupId: string) {
  const { DescribeSecurityGroupRulesCommand } = await import("@aws-sdk/client-ec2");
  const out = await aws.ec2.send(
    new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [groupId] }] }),
  );
  return (out.SecurityGroupRules ?? [])
    .filter((r) => !r.IsEgress)
    .map((r) => ({
      rule: `${r.IpProtocol}/${r.FromPort === r.ToPort ? r.FromPort : `${r.FromPort}-${r.ToPort}`}/${r.ReferencedGroupInfo?.GroupId ?? r.CidrIpv4 ?? r.CidrIpv6 ?? r.PrefixListId}`,
      tags: Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value!])),
      description: r.Description,
    }))
    .sort((a, b) => a.rule.localeCompare(b.rule));
}
