// What exists in AWS for one Service, found through its ownership tags (never from memory), so a restarted
// controller adopts what it made. Reads only.
import {
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type Listener,
  type LoadBalancer,
  type TargetGroup,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { type ResourceTagMapping, paginateGetResources } from "@aws-sdk/client-resource-groups-tagging-api";
import { ConfigurationError, CloudError } from "../../errors.ts";
import type { ServiceRef } from "../../provider.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import { eachPage, call, type AwsClients } from "../clients.ts";
import type {
  HealthCheck,
  ListenerProtocol,
  Observed,
  ObservedLoadBalancer,
  ObservedTargetGroup,
  Target,
} from "../model.ts";
import { TAG } from "../names.ts";
import { directGroupSource, type GroupSource } from "./securityGroupIndex.ts";
import { extraCertificates, listenerAttributes } from "../listeners/certificatesAndAttributes.ts";

export async function taggedResources(
  clients: AwsClients,
  filters: { Key: string; Values: string[] }[],
): Promise<ResourceTagMapping[]> {
  const out: ResourceTagMapping[] = [];
  await eachPage(
    "tagging:GetResources",
    paginateGetResources(
      { client: clients.tagging },
      {
        TagFilters: filters,
        ResourceTypeFilters: ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup"],
        // The most a page may hold: the whole cluster's listing is read this way, once a minute at most. A page
        // may also end at TagsPerPage tags (100 to 500; moto stops at 100 when it is not given, which with
        // Portico's four tags a resource is 24 resources a page), so the most of both is asked for.
        ResourcesPerPage: 100,
        TagsPerPage: 500,
      },
    ),
    (page) => out.push(...(page.ResourceTagMappingList ?? [])),
  );
  return out;
}

/** Where observation may take what is read for many Services at once, instead of reading it for one. */
export interface ObserveOptions {
  /** The load balancer the Service should have (looked up by name when its tags do not show it yet). */
  desiredName?: string;
  /** Listeners whose attributes the Service sets (only those are read: one call each). */
  listenerAttributePorts?: number[];
  /** Where the Service's security groups and backend rules are read from: by default, EC2, for it alone. */
  groups?: GroupSource;
  /** The Service's tagged load balancers and target groups as the account's listings show them, if current. */
  listed?: (service: ServiceRef) => Promise<Listed | undefined>;
  /** A load balancer's listeners read in bulk with other Services', if they can be (else one call of its own). */
  listenersOf?: (loadBalancerArn: string) => Promise<Listener[] | undefined>;
}

export interface Listed {
  loadBalancers: LoadBalancer[];
  targetGroups: TargetGroup[];
}

export async function observe(
  clients: AwsClients,
  cluster: string,
  service: ServiceRef,
  opts: ObserveOptions = {},
): Promise<Observed> {
  const { desiredName, listenerAttributePorts = [], groups = directGroupSource(clients, cluster) } = opts;
  const listed = (await opts.listed?.(service)) ?? (await readAlone(clients, cluster, service));
  const lbs = [...listed.loadBalancers];
  if (desiredName && !lbs.some((lb) => lb.LoadBalancerName === desiredName)) {
    // The tagging index can lag behind a creation; the name is the strongly consistent check.
    const byName = await findByName(clients, desiredName);
    if (byName) {
      await assertOwned(clients, byName.LoadBalancerArn!, cluster, service, desiredName);
      lbs.push(byName);
    }
  }
  const [loadBalancers, targetGroups, securityGroups, backendRules] = await Promise.all([
    Promise.all(
      lbs.map(async (lb) =>
        observeLoadBalancer(
          clients,
          lb,
          listenerAttributePorts,
          await opts.listenersOf?.(lb.LoadBalancerArn!),
        ),
      ),
    ),
    Promise.all(listed.targetGroups.map((tg) => observeTargetGroup(clients, tg))),
    groups.securityGroups(service),
    groups.backendRules(service),
  ]);
  return { loadBalancers, targetGroups, securityGroups, backendRules };
}

/** The Service's load balancers and target groups, found by its tags and described, for it alone. */
async function readAlone(clients: AwsClients, cluster: string, service: ServiceRef): Promise<Listed> {
  const tagged = await taggedResources(clients, [
    { Key: TAG.cluster, Values: [cluster] },
    { Key: TAG.serviceUid, Values: [service.uid] },
  ]);
  const arns = tagged.map((r) => r.ResourceARN!);
  const [loadBalancers, targetGroups] = await Promise.all([
    describeLoadBalancers(
      clients,
      arns.filter((a) => a.includes(":loadbalancer/")),
    ),
    describeTargetGroups(
      clients,
      arns.filter((a) => a.includes(":targetgroup/")),
    ),
  ]);
  return { loadBalancers, targetGroups };
}

export async function describeLoadBalancers(clients: AwsClients, arns: string[]): Promise<LoadBalancer[]> {
  const out: LoadBalancer[] = [];
  for (let i = 0; i < arns.length; i += 20) {
    const chunk = arns.slice(i, i + 20);
    try {
      const page = await call("elbv2:DescribeLoadBalancers", () =>
        clients.elbv2.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: chunk })),
      );
      out.push(...(page.LoadBalancers ?? []));
    } catch (err) {
      if (!(err instanceof CloudError && err.code === "LoadBalancerNotFound")) throw err;
      // One of them was deleted since the tag index listed it: look at each alone.
      for (const arn of chunk) out.push(...(await describeOne(clients, arn)));
    }
  }
  return out;
}

async function describeOne(clients: AwsClients, arn: string): Promise<LoadBalancer[]> {
  try {
    const page = await call("elbv2:DescribeLoadBalancers", () =>
      clients.elbv2.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [arn] })),
    );
    return page.LoadBalancers ?? [];
  } catch (err) {
    if (err instanceof CloudError && err.code === "LoadBalancerNotFound") return [];
    throw err;
  }
}

async function findByName(clients: AwsClients, name: string): Promise<LoadBalancer | undefined> {
  try {
    const page = await call("elbv2:DescribeLoadBalancers", () =>
      clients.elbv2.send(new DescribeLoadBalancersCommand({ Names: [name] })),
    );
    return page.LoadBalancers?.[0];
  } catch (err) {
    if (err instanceof CloudError && err.code === "LoadBalancerNotFound") return undefined;
    throw err;
  }
}

async function assertOwned(
  clients: AwsClients,
  arn: string,
  cluster: string,
  service: ServiceRef,
  name: string,
): Promise<void> {
  const out = await call("elbv2:DescribeTags", () =>
    clients.elbv2.send(new DescribeTagsCommand({ ResourceArns: [arn] })),
  );
  const tags = Object.fromEntries(
    (out.TagDescriptions?.[0]?.Tags ?? []).map((t): [string, string | undefined] => [t.Key ?? "", t.Value]),
  );
  if (tags[TAG.cluster] !== cluster || tags[TAG.serviceUid] !== service.uid) {
    throw new ConfigurationError(
      "LoadBalancerNameTaken",
      `metadata.annotations[${AWS_ANNOTATIONS.name}]`,
      `a load balancer named ${name} exists that Portico did not make for this Service`,
      "choose another name; Portico never adopts or deletes what it did not create",
    );
  }
}

export async function observeLoadBalancer(
  clients: AwsClients,
  lb: LoadBalancer,
  listenerAttributePorts: number[],
  known?: Listener[],
): Promise<ObservedLoadBalancer> {
  const arn = lb.LoadBalancerArn!;
  const [listeners, attributes] = await Promise.all([
    known
      ? { Listeners: known }
      : call("elbv2:DescribeListeners", () =>
          clients.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: arn })),
        ),
    call("elbv2:DescribeLoadBalancerAttributes", () =>
      clients.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn })),
    ),
  ]);
  return {
    ...loadBalancerFields(lb),
    attributes: Object.fromEntries((attributes.Attributes ?? []).map((a) => [a.Key!, a.Value ?? ""])),
    listeners: await Promise.all(
      (listeners.Listeners ?? []).map(async (l) => {
        const defaults = (l.Certificates ?? []).map((c) => c.CertificateArn!);
        // Only a TLS listener can hold more certificates than its default one.
        const extra = l.Protocol === "TLS" ? await extraCertificates(clients, l.ListenerArn!) : [];
        return {
          arn: l.ListenerArn!,
          port: l.Port!,
          protocol: l.Protocol as ListenerProtocol,
          certificateArns: [...defaults, ...extra.filter((c) => !defaults.includes(c))],
          ...(l.SslPolicy ? { sslPolicy: l.SslPolicy } : {}),
          ...(l.AlpnPolicy?.[0] ? { alpnPolicy: l.AlpnPolicy[0] } : {}),
          attributes: listenerAttributePorts.includes(l.Port!)
            ? await listenerAttributes(clients, l.ListenerArn!)
            : {},
          ...(l.DefaultActions?.[0]?.TargetGroupArn
            ? { targetGroupArn: l.DefaultActions[0].TargetGroupArn }
            : {}),
        };
      }),
    ),
  };
}

/** What DescribeLoadBalancers says of a load balancer (the rest takes a call of its own). */
export function loadBalancerFields(lb: LoadBalancer): Omit<ObservedLoadBalancer, "attributes" | "listeners"> {
  const privateLink = lb.EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic;
  return {
    arn: lb.LoadBalancerArn!,
    name: lb.LoadBalancerName!,
    dnsName: lb.DNSName ?? "",
    scheme: lb.Scheme ?? "",
    state: lb.State?.Code ?? "",
    subnets: (lb.AvailabilityZones ?? []).map((z) => z.SubnetId!).sort(),
    securityGroups: lb.SecurityGroups ?? [],
    ipAddressType: lb.IpAddressType ?? "ipv4",
    subnetMappings: (lb.AvailabilityZones ?? []).map((z) => {
      const a = z.LoadBalancerAddresses ?? [];
      const allocationId = a.find((x) => x.AllocationId)?.AllocationId;
      const privateIPv4Address = a.find((x) => x.PrivateIPv4Address)?.PrivateIPv4Address;
      const ipv6Address = a.find((x) => x.IPv6Address)?.IPv6Address;
      return {
        subnetId: z.SubnetId!,
        ...(allocationId ? { allocationId } : {}),
        ...(privateIPv4Address ? { privateIPv4Address } : {}),
        ...(ipv6Address ? { ipv6Address } : {}),
      };
    }),
    ...(privateLink === "on" || privateLink === "off" ? { privateLinkInboundRules: privateLink } : {}),
  };
}

export async function describeTargetGroups(clients: AwsClients, arns: string[]): Promise<TargetGroup[]> {
  const groups: TargetGroup[] = [];
  for (const arn of arns) {
    // One at a time: a group deleted since the tag index listed it fails only its own call.
    try {
      const page = await call("elbv2:DescribeTargetGroups", () =>
        clients.elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] })),
      );
      groups.push(...(page.TargetGroups ?? []));
    } catch (err) {
      if (!(err instanceof CloudError && err.code === "TargetGroupNotFound")) throw err;
    }
  }
  return groups;
}

export async function observeTargetGroup(clients: AwsClients, tg: TargetGroup): Promise<ObservedTargetGroup> {
  const arn = tg.TargetGroupArn!;
  const [{ targets, health }, attributes] = await Promise.all([
    registeredTargets(clients, arn),
    call("elbv2:DescribeTargetGroupAttributes", () =>
      clients.elbv2.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: arn })),
    ),
  ]);
  return {
    ...targetGroupFields(tg),
    attributes: Object.fromEntries((attributes.Attributes ?? []).map((a) => [a.Key!, a.Value ?? ""])),
    targets,
    health,
  };
}

/** What DescribeTargetGroups says of a target group (the rest takes calls of their own). */
export function targetGroupFields(
  tg: TargetGroup,
): Omit<ObservedTargetGroup, "attributes" | "targets" | "health"> {
  const healthCheck: HealthCheck = {
    protocol: (tg.HealthCheckProtocol ?? "TCP") as HealthCheck["protocol"],
    port: tg.HealthCheckPort ?? "traffic-port",
    intervalSeconds: tg.HealthCheckIntervalSeconds ?? 30,
    timeoutSeconds: tg.HealthCheckTimeoutSeconds ?? 10,
    healthyThreshold: tg.HealthyThresholdCount ?? 5,
    unhealthyThreshold: tg.UnhealthyThresholdCount ?? 2,
    ...(tg.HealthCheckPath ? { path: tg.HealthCheckPath } : {}),
    ...(tg.Matcher?.HttpCode ? { matcher: tg.Matcher.HttpCode } : {}),
  };
  return {
    arn: tg.TargetGroupArn!,
    name: tg.TargetGroupName!,
    protocol: tg.Protocol ?? "",
    port: tg.Port ?? 0,
    targetType: tg.TargetType ?? "",
    healthCheck,
    loadBalancerArns: tg.LoadBalancerArns ?? [],
  };
}

/**
 * Registered targets that are not already draining (what a deregistration would still have to remove), and
 * their health, read in the same call: whether traffic flows costs nothing more.
 */
async function registeredTargets(
  clients: AwsClients,
  targetGroupArn: string,
): Promise<{ targets: Target[]; health: NonNullable<ObservedTargetGroup["health"]> }> {
  const answer = await call("elbv2:DescribeTargetHealth", () =>
    clients.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: targetGroupArn })),
  );
  const live = (answer.TargetHealthDescriptions ?? []).filter((d) => d.TargetHealth?.State !== "draining");
  const targets = live.map((d) => ({ id: d.Target!.Id!, port: d.Target!.Port! }));
  const health = Object.fromEntries(
    live.map((d) => [
      `${d.Target!.Id!}:${d.Target!.Port!}`,
      {
        state: d.TargetHealth?.State ?? "unavailable",
        ...(d.TargetHealth?.Reason ? { reason: d.TargetHealth.Reason } : {}),
      },
    ]),
  );
  return { targets, health };
}

/**
 * An earlier observation with its targets read again, or undefined when one of its target groups is gone
 * (then only a full observation can say what exists).
 */
export async function refreshTargets(clients: AwsClients, earlier: Observed): Promise<Observed | undefined> {
  try {
    const targetGroups = await Promise.all(
      earlier.targetGroups.map(async (tg) => ({ ...tg, ...(await registeredTargets(clients, tg.arn)) })),
    );
    return { ...earlier, targetGroups };
  } catch (err) {
    if (err instanceof CloudError && err.code === "TargetGroupNotFound") return undefined;
    throw err;
  }
}
