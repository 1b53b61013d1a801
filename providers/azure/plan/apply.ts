// Carries out a plan, one operation at a time, in its order. Every operation is safe to repeat: a crash at any
// point leaves resources named and tagged so that the next observation finds them and the next plan completes
// the work. Shared resources are changed only through the etag writer, by re-running the plan's pure edits.
import { putThenRead } from "../arm/lro.ts";
import { CloudError } from "../../errors.ts";
import { isNotFound, type AzureClients } from "../arm/clients.ts";
import { resourceGroupOf, sameId } from "../arm/ids.ts";
import { withoutService, withService } from "../loadBalancer/loadBalancerEdit.ts";
import { pinnedTo, withoutLegacy } from "../adoption/adoption.ts";
import { CPA_OWNERSHIP_TAGS } from "../adoption/cloudProviderAzure.ts";
import { withoutLegacySecurityRules } from "../security/legacyRules.ts";
import type {
  DesiredService,
  LoadBalancer,
  NetworkSecurityGroup,
  Observed,
  PublicIPAddress,
} from "../model.ts";
import { observedAddress, type Operation } from "./plan.ts";
import { createPublicIp, editPublicIpTags, leavePublicIp, setPublicIpDnsLabel } from "../publicIps/writes.ts";
import { settleLeave, tagsAfterJoining, type Holders } from "../publicIps/shared.ts";
import { withoutServiceRules, withServiceRules } from "../security/rulesEdit.ts";
import type { EtagWriter, ResourceAccess } from "../arm/writer.ts";

export interface ApplyContext {
  clients: AzureClients;
  writer: EtagWriter;
  frontend: string;
  observed: Observed & { at: number };
  loadBalancerGroup: string;
  securityGroup?: { resourceGroup: string; name: string };
  location: string;
  /** The desired state the plan was made for; absent when deleting. */
  desired?: DesiredService;
  /** Who the Services on a shared public IP are, as the controller knows them now (publicIps/shared.ts). */
  holders: Holders;
}

/** Runs the operations and returns the Service's frontend address afterwards, when it has one. */
export async function apply(ops: Operation[], ctx: ApplyContext): Promise<string | undefined> {
  const { clients, writer, observed } = ctx;
  const seen = <T>(value: T | undefined) => ({ value, at: observed.at });
  const createdIps: PublicIPAddress[] = [];
  let lbAfter: LoadBalancer | undefined;
  const address = () => addressOf(ctx, createdIps, lbAfter);
  const run = async (op: Operation): Promise<void> => {
    switch (op.kind) {
      case "createPublicIp": {
        const { kind: _kind, ...where } = op;
        createdIps.push(await createPublicIp(clients, { ...where, location: ctx.location }));
        break;
      }
      case "sharePublicIp":
        await editPublicIpTags(clients, op, (tags) => tagsAfterJoining(tags, op.uid));
        break;
      case "leavePublicIp":
        // Decided again on each read: the Services deleted together leave it one at a time, in any order.
        await leavePublicIp(
          clients,
          op,
          (tags) => settleLeave(op, tags, ctx.holders),
          observed.publicIps.find(
            (p) =>
              p.name === op.name && resourceGroupOf(p.id)?.toLowerCase() === op.resourceGroup.toLowerCase(),
          ),
        );
        break;
      case "setPublicIpDnsLabel": {
        const { kind: _kind, ...where } = op;
        await setPublicIpDnsLabel(clients, where);
        break;
      }
      case "tagPublicIp":
        // From a fresh read: the tags also record who shares the public IP, which another Service may be
        // changing right now (publicIps/shared.ts).
        await editPublicIpTags(clients, op, (tags) => ({ ...tags, ...op.tags }));
        break;
      case "adoptPublicIp":
        // cloud-provider-azure's tags go, so that it no longer counts the public IP its own (and never deletes it).
        await editPublicIpTags(clients, op, (tags) => ({
          ...Object.fromEntries(Object.entries(tags).filter(([k]) => !CPA_OWNERSHIP_TAGS.includes(k))),
          ...op.tags,
        }));
        break;
      case "releaseLegacyFrontend": {
        const before = observed.loadBalancers.find((lb) => lb.name === op.loadBalancer);
        await writer.submit(
          key("lb", ctx.loadBalancerGroup, op.loadBalancer),
          loadBalancerAccess(clients, ctx.loadBalancerGroup, op.loadBalancer),
          (lb) => lb && withoutLegacy(lb, op.frontend),
          seen(before),
        );
        break;
      }
      case "updateLoadBalancer": {
        const desired = ctx.desired!;
        const before = observed.loadBalancers.find((lb) => lb.name === op.loadBalancer);
        lbAfter = await writer.submit(
          key("lb", ctx.loadBalancerGroup, op.loadBalancer),
          loadBalancerAccess(clients, ctx.loadBalancerGroup, op.loadBalancer),
          (lb) => withService(lb, op.pinAddress ? pinnedTo(desired, op.pinAddress) : desired),
          seen(before),
        );
        break;
      }
      case "removeFromLoadBalancer": {
        const before = observed.loadBalancers.find((lb) => lb.name === op.loadBalancer);
        await writer.submit(
          key("lb", ctx.loadBalancerGroup, op.loadBalancer),
          loadBalancerAccess(clients, ctx.loadBalancerGroup, op.loadBalancer),
          (lb) => lb && withoutService(lb, ctx.frontend),
          seen(before),
        );
        break;
      }
      case "updateSecurityRules":
      case "removeSecurityRules": {
        const where = ctx.securityGroup!;
        const desired = ctx.desired;
        const frontendAddress = address();
        await writer.submit(
          key("nsg", where.resourceGroup, where.name),
          securityGroupAccess(clients, where),
          (nsg) => {
            if (!nsg) throw missingSecurityGroup(where);
            if (op.kind === "removeSecurityRules" || !desired) return withoutServiceRules(nsg, ctx.frontend);
            return withServiceRules(nsg, {
              frontend: ctx.frontend,
              description: desired.securityRuleDescription,
              rules: desired.securityRules ?? [],
              ...(frontendAddress ? { frontendAddress } : {}),
            });
          },
          seen(observed.securityGroup),
        );
        break;
      }
      case "removeLegacySecurityRules": {
        const where = ctx.securityGroup!;
        const uid = ctx.desired!.service.uid;
        await writer.submit(
          key("nsg", where.resourceGroup, where.name),
          securityGroupAccess(clients, where),
          (nsg) => {
            if (!nsg) throw missingSecurityGroup(where);
            return withoutLegacySecurityRules(nsg, uid, op.address);
          },
          seen(observed.securityGroup),
        );
        break;
      }
    }
  };
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const then = ops[i + 1];
    // A public frontend's address is its public IP's, known before the load balancer is written: the security
    // rules need not wait for that write, and the Services of one wave of reconciles reach the security group's
    // writer together, in one write, instead of each after its own load balancer's. (An internal frontend's
    // address may be the one the load balancer write gets.)
    if (
      op.kind === "updateLoadBalancer" &&
      then?.kind === "updateSecurityRules" &&
      ctx.desired?.frontend.kind === "public"
    ) {
      await Promise.all([run(op), run(then)]);
      i++;
    } else await run(op);
  }
  return address();
}

function addressOf(
  ctx: ApplyContext,
  created: PublicIPAddress[],
  lbAfter: LoadBalancer | undefined,
): string | undefined {
  const d = ctx.desired;
  if (!d) return undefined;
  if (d.frontend.kind === "public") {
    const id = d.frontend.publicIpId;
    return created.find((p) => sameId(p.id, id))?.ipAddress ?? observedAddress(d, ctx.observed);
  }
  const fromWrite = lbAfter?.frontendIPConfigurations?.find(
    (f) => f.name === d.frontendName,
  )?.privateIPAddress;
  return fromWrite ?? observedAddress(d, ctx.observed);
}

const key = (kind: string, rg: string, name: string) => `${kind}:${rg}/${name}`.toLowerCase();

function conditionHeaders(condition: { ifMatch: string } | { ifNoneMatch: "*" }): Record<string, string> {
  return "ifMatch" in condition
    ? { "If-Match": condition.ifMatch }
    : { "If-None-Match": condition.ifNoneMatch };
}

/** Reads that find nothing return undefined; errors stay raw so the writer can tell a lost race from a failure. */
async function orAbsent<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function loadBalancerAccess(
  clients: AzureClients,
  rg: string,
  name: string,
): ResourceAccess<LoadBalancer> {
  const lbs = clients.network.loadBalancers;
  const poll = { updateIntervalInMs: clients.pollIntervalMs };
  return {
    operation: `loadBalancers:${name}`,
    get: () => orAbsent(lbs.get(rg, name)),
    put: (body, condition) =>
      putThenRead(
        (onResponse) =>
          lbs.createOrUpdate(rg, name, body, {
            ...poll,
            requestOptions: { headers: conditionHeaders(condition) },
            onResponse,
          }),
        () => lbs.get(rg, name),
        clients.pollIntervalMs,
      ),
    delete: async (etag) => {
      await lbs.delete(rg, name, { ...poll, requestOptions: { headers: { "If-Match": etag } } });
    },
  };
}

export function securityGroupAccess(
  clients: AzureClients,
  where: { resourceGroup: string; name: string },
): ResourceAccess<NetworkSecurityGroup> {
  const groups = clients.network.networkSecurityGroups;
  const poll = { updateIntervalInMs: clients.pollIntervalMs };
  return {
    operation: `networkSecurityGroups:${where.name}`,
    get: () => orAbsent(groups.get(where.resourceGroup, where.name)),
    put: (body, condition) =>
      putThenRead(
        (onResponse) =>
          groups.createOrUpdate(where.resourceGroup, where.name, body, {
            ...poll,
            requestOptions: { headers: conditionHeaders(condition) },
            onResponse,
          }),
        () => groups.get(where.resourceGroup, where.name),
        clients.pollIntervalMs,
      ),
    // Portico never deletes the cluster's security group; its edits only take rules out.
    delete: () => Promise.reject(new Error("the network security group is not Portico's to delete")),
  };
}

function missingSecurityGroup(where: { resourceGroup: string; name: string }): CloudError {
  return new CloudError({
    operation: "networkSecurityGroups:get",
    code: "SecurityGroupNotFound",
    message: `network security group ${where.name} is not in resource group ${where.resourceGroup}; fix securityGroupName in the controller's Azure config`,
    retryable: false,
  });
}
