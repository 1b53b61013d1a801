// The Azure Standard Load Balancer provider: intent → settings and desired parts (pure) → observe ARM → plan
// (pure) → apply through etag-guarded, batched writes of the shared load balancers and security group.
import type { TokenCredential } from "@azure/identity";
import type {
  EnsureResult,
  InspectNode,
  LoadBalancerIntent,
  LoadBalancerProvider,
  PlanDescription,
  ServiceRef,
} from "../provider.ts";
import { parseAzureSettings, type AzureServiceSettings } from "./annotations.ts";
import { apply, type ApplyContext } from "./apply.ts";
import { createAzureClients, type AzureClients } from "./clients.ts";
import { resourceGroups, type AzureConfig } from "./config.ts";
import { createCredential } from "./credentials.ts";
import { chooseTargetType, desiredService } from "./desired.ts";
import { azureTraffic } from "./traffic.ts";
import { resourceGroupOf } from "./ids.ts";
import { inspectService } from "./inspect.ts";
import { assertWithinLimits } from "./limits.ts";
import type { DesiredService, Observed } from "./model.ts";
import { frontendName } from "./names.ts";
import { NetworkCache } from "./network.ts";
import { listPublicIps, observe, type Where } from "./observe.ts";
import { ownedServiceRefs } from "./owned.ts";
import { describeOperation, plan, planDeletion, type Plan } from "./plan.ts";
import { choosePublicIp } from "./publicIp.ts";
import { EtagWriter } from "./writer.ts";

export { AZURE_LOAD_BALANCER_CLASS } from "../classes.ts";
/** How soon to look again when the frontend has no address yet. */
const ADDRESS_PENDING_RETRY_MS = 5_000;

export interface AzureProviderOptions extends AzureConfig {
  /** Names the cluster in ownership tags and, by default, its shared load balancers. */
  clusterName: string;
  credential?: TokenCredential;
  clients?: AzureClients;
}

type Prepared = {
  desired: DesiredService;
  observed: Observed & { at: number };
  plan: Plan;
  targetType: "instance" | "ip";
};

export class AzureProvider implements LoadBalancerProvider {
  readonly name = "azure";
  readonly clients: AzureClients;
  /** Shared by every reconcile, so that edits of one load balancer are serialized and batched. */
  readonly writer = new EtagWriter();
  private readonly config: AzureConfig;
  private readonly cluster: string;
  private readonly network: NetworkCache;

  constructor(opts: AzureProviderOptions) {
    const { clusterName, credential, clients, ...config } = opts;
    this.cluster = clusterName;
    this.config = config;
    this.clients =
      clients ??
      createAzureClients({
        credential: credential ?? createCredential(config),
        subscriptionId: config.subscriptionId,
        ...(config.resourceManagerEndpoint ? { endpoint: config.resourceManagerEndpoint } : {}),
        ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
        ...(config.pollIntervalMs !== undefined ? { pollIntervalMs: config.pollIntervalMs } : {}),
      });
    this.network = new NetworkCache(this.clients, resourceGroups(config).vnet, config.vnetName);
  }

  async ensure(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const { desired, observed, plan: p, targetType } = await this.prepare(intent);
    const address = await apply(p.operations, this.context(desired.frontendName, observed, desired));
    return {
      ingress: address ? [{ ip: address, ipMode: "VIP" }] : [],
      changes: p.operations.map(describeOperation),
      notices: p.notices,
      traffic: azureTraffic(intent, desired, targetType),
      ...(address ? {} : { requeueAfterMs: ADDRESS_PENDING_RETRY_MS }),
    };
  }

  async plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    const { plan: p } = await this.prepare(intent);
    return { operations: p.operations.map(describeOperation) };
  }

  async delete(service: ServiceRef): Promise<void> {
    const fe = frontendName(service.uid);
    const observed = await this.observe(undefined, fe);
    await apply(planDeletion(service, fe, this.cluster, observed), this.context(fe, observed));
  }

  /** Reads only: the same observation a reconcile starts from, pictured for `porticoctl`. */
  async inspect(service: ServiceRef): Promise<InspectNode[]> {
    return inspectService(await this.observe(undefined, frontendName(service.uid)), service);
  }

  async ownedServices(): Promise<ServiceRef[]> {
    return ownedServiceRefs(await observe(this.clients, this.where()), this.cluster);
  }

  private async prepare(intent: LoadBalancerIntent): Promise<Prepared> {
    const settings = parseAzureSettings(intent.annotations, intent.loadBalancerIP);
    const network = await this.network.get(
      settings.internal ? (settings.internalSubnet ?? this.config.subnetName) : undefined,
    );
    const observed = await this.observe(settings, frontendName(intent.service.uid));
    const ctx = { cluster: this.cluster, config: this.config };
    const publicIp = choosePublicIp(settings, intent.service, ctx, observed.publicIps);
    const desired = desiredService(intent, settings, { ...ctx, network, ...(publicIp ? { publicIp } : {}) });
    // Before the first write: a Service that would take a shared resource past Azure's limits is refused while
    // nothing of it exists, rather than half-made when ARM refuses a later write.
    assertWithinLimits(desired, observed, this.config.limits);
    const targetType = chooseTargetType(intent, settings, this.config.floatingIPDefault ?? false);
    return { desired, observed, plan: plan(desired, observed), targetType };
  }

  /** Observes, and also lists the public IPs in any other resource group the Service's frontends point into. */
  private async observe(
    settings: AzureServiceSettings | undefined,
    fe: string,
  ): Promise<Observed & { at: number }> {
    const where = this.where(settings);
    const observed = await observe(this.clients, where);
    const listed = new Set(where.publicIpGroups.map((g) => g.toLowerCase()));
    const more = new Set<string>();
    for (const lb of observed.loadBalancers)
      for (const f of lb.frontendIPConfigurations ?? []) {
        const rg = f.name === fe ? resourceGroupOf(f.publicIPAddress?.id) : undefined;
        if (rg && !listed.has(rg.toLowerCase())) more.add(rg);
      }
    for (const rg of more) observed.publicIps.push(...(await listPublicIps(this.clients, rg)));
    return observed;
  }

  private where(settings?: AzureServiceSettings): Where {
    const groups = resourceGroups(this.config);
    return {
      loadBalancerGroup: groups.loadBalancers,
      publicIpGroups: [
        groups.publicIps,
        ...(settings?.publicIpResourceGroup ? [settings.publicIpResourceGroup] : []),
      ],
      ...(this.config.securityGroupName
        ? { securityGroup: { resourceGroup: groups.securityGroup, name: this.config.securityGroupName } }
        : {}),
    };
  }

  private context(fe: string, observed: Observed & { at: number }, desired?: DesiredService): ApplyContext {
    const where = this.where();
    return {
      clients: this.clients,
      writer: this.writer,
      frontend: fe,
      observed,
      loadBalancerGroup: where.loadBalancerGroup,
      ...(where.securityGroup ? { securityGroup: where.securityGroup } : {}),
      location: this.config.location,
      ...(desired ? { desired } : {}),
    };
  }
}
