// A read-only picture of a Service's NLB for `porticoctl status`: listeners, target groups and each target's
// health as ELBv2 reports it. Found by the Service's UID tag alone, so no cluster name is needed.
import { DescribeTargetHealthCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import type { InspectNode, ServiceRef } from "../provider.ts";
import { call, type AwsClients } from "./clients.ts";
import { TAG } from "./names.ts";
import { observe, taggedResources } from "./state/observe.ts";
import { describeRange } from "./securityGroups/backendRanges.ts";
import { observeRanges } from "./securityGroups/sharedBackend.ts";

export async function inspectService(clients: AwsClients, service: ServiceRef): Promise<InspectNode[]> {
  const tagged = await taggedResources(clients, [{ Key: TAG.serviceUid, Values: [service.uid] }]);
  const cluster = tagged.flatMap((r) => r.Tags ?? []).find((t) => t.Key === TAG.cluster)?.Value;
  if (!cluster) return [{ label: "no AWS resources are tagged for this Service", health: "warn" }];
  const observed = await observe(clients, cluster, service);
  const nodes: InspectNode[] = [];
  for (const lb of observed.loadBalancers) {
    const listeners: InspectNode[] = [];
    for (const l of [...lb.listeners].sort((a, b) => a.port - b.port)) {
      const tg = observed.targetGroups.find((t) => t.arn === l.targetGroupArn);
      const children: InspectNode[] = [];
      if (tg) {
        const health = await call("elbv2:DescribeTargetHealth", () =>
          clients.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tg.arn })),
        );
        const targets = (health.TargetHealthDescriptions ?? []).map((d): InspectNode => {
          const state = d.TargetHealth?.State ?? "unknown";
          const reason = d.TargetHealth?.Description ? ` (${d.TargetHealth.Description})` : "";
          return {
            label: `${d.Target?.Id}:${d.Target?.Port} ${state}${reason}`,
            health: state === "healthy" ? "ok" : state === "draining" || state === "initial" ? "warn" : "bad",
          };
        });
        const hc = tg.healthCheck;
        children.push({
          label: `target group ${tg.name} (${tg.targetType}, health ${hc.protocol}:${hc.port}${hc.path ?? ""})`,
          ...(targets.length
            ? { children: targets }
            : { children: [{ label: "no targets registered", health: "bad" }] }),
        });
      } else {
        children.push({ label: "forwards to a target group Portico does not own", health: "warn" });
      }
      listeners.push({
        label: `listener ${l.protocol}:${l.port}${l.certificateArns.length ? ` (${l.certificateArns.length} TLS certificate${l.certificateArns.length > 1 ? "s" : ""})` : ""}`,
        children,
      });
    }
    nodes.push({
      label: `NLB ${lb.name} ${lb.scheme} ${lb.state} ${lb.dnsName}`,
      health: lb.state === "active" ? "ok" : "warn",
      children: listeners.length ? listeners : [{ label: "no listeners", health: "bad" }],
    });
  }
  for (const g of observed.securityGroups) {
    nodes.push({
      label: `security group ${g.id} allows ${g.ingress.map((r) => `${r.protocol}/${r.port} from ${r.cidr}`).join(", ") || "nothing"}`,
    });
  }
  const byGroup = new Map<string, string[]>();
  for (const r of observed.backendRules)
    byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), `${r.protocol}/${r.port} from ${r.source}`]);
  for (const [groupId, rules] of byGroup)
    nodes.push({ label: `backend security group ${groupId} admits the NLB: ${rules.sort().join(", ")}` });
  nodes.push(
    ...(await sharedRanges(
      clients,
      cluster,
      observed.loadBalancers.flatMap((lb) => lb.securityGroups),
    )),
  );
  return nodes;
}

/** The shared range rules admitting a group on the NLB (the cluster's shared backend group). */
async function sharedRanges(
  clients: AwsClients,
  cluster: string,
  nlbGroups: string[],
): Promise<InspectNode[]> {
  if (!nlbGroups.length) return [];
  const ranges = (await observeRanges(clients, cluster)).filter((r) => nlbGroups.includes(r.source));
  const bySource = new Map<string, string[]>();
  for (const r of ranges) bySource.set(r.source, [...(bySource.get(r.source) ?? []), describeRange(r)]);
  return [...bySource].map(([source, list]) => ({
    label: `shared backend group ${source} is admitted: ${list.sort().join(", ")}`,
  }));
}
