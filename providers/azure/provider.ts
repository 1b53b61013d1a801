// The Azure Standard Load Balancer provider: intent → settings and desired parts (pure) → observe ARM → plan
// (pure) → apply through etag-guarded, batched writes of the shared load balancers and security group.
import type { TokenCredential } from "@azure/identity";
import type {
  EnsureResult,
  InspectNode,
  LoadBalancerIntent,
  LoadBalancerProvider,
  PlanDescription,
  SecurityRuleDrift,
  ServiceRef,
} from "../provider.ts";
import { parseAzureSettings, type AzureServiceSettings } from "./annotations/settings.ts";
import { apply, type ApplyContext } from "./plan/apply.ts";
import { createAzureClients, type AzureClients } from "./arm/clients.ts";
import { AzureConfigError, resourceGroups, type AzureConfig } from "./config.ts";
import { createCredential } from "./arm/credentials.ts";
import { withPriority } from "../priority.ts";
import { chooseTargetType } from "./desired/desired.ts";
import { trafficOfSides } from "./loadBalancer/traffic.ts";
import { healthyPods, podsAwaitGates } from "./loadBalancer/ruleHealth.ts";
import { resourceGroupOf } from "./arm/ids.ts";
import { inspectService } from "./observe/inspect.ts";
import { checkList, parseLoadBalancerConfigurations } from "./placement/lbConfigurations.ts";
import type { DesiredService, Observed } from "./model.ts";
import { frontendName } from "./names.ts";
import { droppedFamilies, FAMILIES, sideNotices } from "./desired/sides.ts";
import { placedSides, placementNotices } from "./placement/placeSides.ts";
import { NetworkCache } from "./observe/network.ts";
import { getSecurityGroup, listPublicIps, SharedObservations, type Where } from "./observe/observe.ts";
import { ownedServiceRefs } from "./observe/owned.ts";
import { describeOperation, plan, planDeletion, type Operation, type Plan } from "./plan/plan.ts";
import { EtagWriter } from "./arm/writer.ts";
import { clusterHolders, type ServiceList } from "./publicIps/holders.ts";
import { SecurityRuleRecords } from "../securityRuleRecords.ts";
import { ruleDifferences } from "./security/ruleDrift.ts";
import type { ResolvedRules } from "./security/rulesEdit.ts";

export { AZURE_LOAD_BALANCER_CLASS } from "../classes.ts";
/** Operations that write a Service's security rules. */
const SECURITY_OPERATIONS = new Set<Operation["kind"]>([
  "updateSecurityRules",
  "removeSecurityRules",
  "removeLegacySecurityRules",
]);
/** How soon to look again when the frontend has no address yet. */
const ADDRESS_PENDING_RETRY_MS = 5_000;

export interface AzureProviderOptions extends AzureConfig {
  /** Names the cluster in ownership tags and, by default, its shared load balancers. */
  clusterName: string;
  credential?: TokenCredential;
  clients?: AzureClients;
  /** The cluster's Services (the controller's cache): who may take over a shared public IP (publicIps/holders.ts). */
  services?: ServiceList;
}

/** One family's side of the Service: what it should be and the plan that makes it so. */
type Side = { desired: DesiredService; plan: Plan };

type Prepared = {
  sides: Side[];
  /** Operations removing the side of a family the Service no longer has (its frontend, rules, public IP). */
  removals: { frontend: string; operations: Operation[] }[];
  observed: Observed & { at: number };
  targetType: "instance" | "ip";
};

export class AzureProvider implements LoadBalancerProvider {
  readonly name = "azure";
  /** IP-based pools: each rule's health (loadBalancer/ruleHealth.ts) tells which pods its probe passes. */
  readonly reportsPodHealth = true;
  readonly clients: AzureClients;
  /** Shared by every reconcile, so that edits of one load balancer are serialized and batched. */
  readonly writer = new EtagWriter();
  private readonly config: AzureConfig;
  private readonly cluster: string;
  private readonly services: ServiceList | undefined;
  private readonly network: NetworkCache;
  /** Reads shared by the reconciles running at once (observe/observe.ts). */
  private readonly observations: SharedObservations;
  /** The security rules each Service's last pass put in the security group, per side (security/ruleDrift.ts). */
  private readonly securityRules = new SecurityRuleRecords<ResolvedRules[]>(() => performance.now());

  constructor(opts: AzureProviderOptions) {
    const { clusterName, credential, clients, services, ...config } = opts;
    this.cluster = clusterName;
    this.services = services;
    this.config = config;
    const multiple = config.multipleStandardLoadBalancerConfigurations;
    if (multiple?.length) {
      // Checked here too: the controller may be handed the settings without the file (tests, embedding).
      const { problems } = parseLoadBalancerConfigurations(multiple);
      problems.push(...checkList(multiple, config.loadBalancerName ?? clusterName));
      if (config.loadBalancerPerService)
        problems.push(
          '"loadBalancerPerService" cannot be combined with "multipleStandardLoadBalancerConfigurations"; set one',
        );
      if (problems.length) throw new AzureConfigError(`Azure config ${problems.join("; ")}`);
    }
    this.clients =
      clients ??
      createAzureClients({
        credential: credential ?? createCredential(config),
        subscriptionId: config.subscriptionId,
        ...(config.resourceManagerEndpoint ? { endpoint: config.resourceManagerEndpoint } : {}),
        ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
        ...(config.pollIntervalMs !== undefined ? { pollIntervalMs: config.pollIntervalMs } : {}),
        ...(config.rateLimit !== undefined ? { rateLimit: config.rateLimit } : {}),
      });
    // Spaced observations start at once when every reconcile under way is waiting for one
    // (observe/observe.ts).
    this.observations = new SharedObservations(this.clients, undefined, { askers: () => this.underWay });
    this.network = new NetworkCache(this.clients, resourceGroups(config).vnet, config.vnetName);
  }

  ensure(intent: LoadBalancerIntent, context: { background?: boolean } = {}): Promise<EnsureResult> {
    // Every ARM request made for this pass waits behind users' changes on the shared rate limit.
    return withPriority(context.background ? "background" : "user", () =>
      this.counted(() =>
        this.ensureNow(intent).catch((err: unknown) => {
          // What failed may have left the rules anywhere: the next pass that goes through says what they are.
          this.securityRules.forget(intent.service.uid);
          throw err;
        }),
      ),
    );
  }

  private async ensureNow(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const { sides, removals, observed, targetType } = await this.prepare(intent);
    // While Portico writes them, the Service's rules are not compared (the check would take its writes for drift).
    const rulesWritten = [
      ...sides.flatMap((s) => s.plan.operations),
      ...removals.flatMap((r) => r.operations),
    ].some((op) => SECURITY_OPERATIONS.has(op.kind))
      ? this.securityRules.writing(intent.service.uid)
      : undefined;
    // The sides one after the other, in the Service's family order: each edits the load balancer from a fresh
    // read (the writer), so the second sees the first's frontend. The family the Service dropped goes last.
    const addresses: string[] = [];
    const held: ResolvedRules[] = [];
    try {
      for (const { desired, plan: p } of sides) {
        const address = await apply(p.operations, this.context(desired.frontendName, observed, desired));
        if (address) addresses.push(address);
        if (desired.securityRules)
          held.push({
            frontend: desired.frontendName,
            description: desired.securityRuleDescription,
            rules: desired.securityRules,
            ...(address ? { frontendAddress: address } : {}),
          });
      }
      for (const r of removals) await apply(r.operations, this.context(r.frontend, observed));
    } finally {
      rulesWritten?.();
    }
    // The security-rule check compares the group with these from now on.
    if (held.length) this.securityRules.held(intent.service, held);
    else this.securityRules.forget(intent.service.uid);
    const complete = addresses.length === sides.length;
    // IP-based pools send to pods: their gates open on what the rules' probes say, read while some pod waits.
    const pods =
      targetType !== "ip"
        ? undefined
        : podsAwaitGates(intent)
          ? await healthyPods(
              this.clients,
              sides.map((s) => s.desired),
            )
          : [];
    return {
      ingress: addresses.map((ip) => ({ ip, ipMode: "VIP" as const })),
      changes: [...sides.flatMap((s) => s.plan.operations), ...removals.flatMap((r) => r.operations)].map(
        describeOperation,
      ),
      notices: [
        ...sides.flatMap((s) => s.plan.notices),
        // Told when the Service's parts change, not on every resync.
        ...(sides.some((s) => s.plan.operations.length)
          ? [
              ...sideNotices(sides.map((s) => s.desired)),
              ...(targetType === "instance" ? placementNotices(this.config, intent) : []),
            ]
          : []),
      ],
      traffic: trafficOfSides(intent, sides, targetType),
      ...(pods ? { healthyEndpoints: pods } : {}),
      ...(complete ? {} : { requeueAfterMs: ADDRESS_PENDING_RETRY_MS }),
    };
  }

  async plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    const { sides, removals } = await this.counted(() => this.prepare(intent));
    const ops = [...sides.flatMap((s) => s.plan.operations), ...removals.flatMap((r) => r.operations)];
    return { operations: ops.map(describeOperation) };
  }

  delete(service: ServiceRef): Promise<void> {
    return this.counted(() => this.deleteNow(service));
  }

  /**
   * One GET of the cluster's network security group against the rules every Service's last pass put in it; the
   * Services whose rules differ are returned, for their reconcile to restore them. Nothing ensured: no call.
   */
  checkSecurityRules(): Promise<SecurityRuleDrift[]> {
    const where = this.where().securityGroup;
    if (!where || !this.securityRules.size) return Promise.resolve([]);
    return withPriority("background", async () => {
      const readAt = performance.now();
      const nsg = await getSecurityGroup(this.clients, where);
      // No group at all: every pass fails naming it (plan/apply.ts), which a check cannot mend.
      if (!nsg) return [];
      return this.securityRules
        .drifted(readAt, (sides) => sides.flatMap((want) => ruleDifferences(nsg, want)))
        .map((d) => ({ ...d, restored: false }));
    });
  }

  /** A new leadership term: another leader may have changed the Services' rules since this one last wrote them. */
  startTerm(): void {
    this.securityRules.clear();
  }

  private async deleteNow(service: ServiceRef): Promise<void> {
    this.securityRules.forget(service.uid);
    const observed = await this.observe(
      undefined,
      frontendName(service.uid),
      frontendName(service.uid, "IPv6"),
    );
    for (const family of FAMILIES) {
      const fe = frontendName(service.uid, family);
      const holders = clusterHolders(this.services, observed);
      const ops = planDeletion(service, fe, this.cluster, observed, family, holders);
      await apply(ops, this.context(fe, observed));
    }
  }

  /** Reads only: the same observation a reconcile starts from, pictured for `porticoctl`. */
  async inspect(service: ServiceRef): Promise<InspectNode[]> {
    const frontends = FAMILIES.map((f) => frontendName(service.uid, f));
    return inspectService(
      await this.observe(undefined, ...frontends),
      service,
      this.config.multipleStandardLoadBalancerConfigurations,
    );
  }

  async ownedServices(): Promise<ServiceRef[]> {
    return ownedServiceRefs(await this.observations.observe(this.where()), this.cluster);
  }

  /** Reconciles (and other callers that observe) under way in this provider. */
  private underWay = 0;

  private async counted<T>(run: () => Promise<T>): Promise<T> {
    this.underWay++;
    try {
      return await run();
    } finally {
      this.underWay--;
      // One fewer that may still ask: those waiting may be all that are left.
      this.observations.poke();
    }
  }

  targetType(intent: LoadBalancerIntent): "instance" | "ip" {
    const settings = parseAzureSettings(intent.annotations, intent.loadBalancerIP);
    return chooseTargetType(intent, settings, this.config.floatingIPDefault ?? false);
  }

  private async prepare(intent: LoadBalancerIntent): Promise<Prepared> {
    const settings = parseAzureSettings(intent.annotations, intent.loadBalancerIP);
    const network = await this.network.get(
      settings.internal ? (settings.internalSubnet ?? this.config.subnetName) : undefined,
    );
    const uid = intent.service.uid;
    const observed = await this.observe(settings, frontendName(uid), frontendName(uid, "IPv6"));
    const ctx = { cluster: this.cluster, config: this.config };
    // Placed, and checked against Azure's limits, before the first write: a Service that would take a shared
    // resource past one is refused while nothing of it exists, rather than half-made when ARM refuses a later write.
    const desired = placedSides(intent, settings, { ...ctx, network }, observed);
    const targetType = chooseTargetType(intent, settings, this.config.floatingIPDefault ?? false);
    const holders = clusterHolders(this.services, observed);
    const removals = droppedFamilies(desired).map((family) => {
      const frontend = frontendName(uid, family);
      const operations = planDeletion(intent.service, frontend, this.cluster, observed, family, holders);
      return { frontend, operations };
    });
    return {
      sides: desired.map((d) => ({ desired: d, plan: plan(d, observed, holders) })),
      removals: removals.filter((r) => r.operations.length),
      observed,
      targetType,
    };
  }

  /** Observes, and also lists the public IPs in any other resource group the Service's frontends point into. */
  private async observe(
    settings: AzureServiceSettings | undefined,
    ...frontends: string[]
  ): Promise<Observed & { at: number }> {
    const where = this.where(settings);
    const observed = await this.observations.observe(where);
    const listed = new Set(where.publicIpGroups.map((g) => g.toLowerCase()));
    const more = new Set<string>();
    for (const lb of observed.loadBalancers)
      for (const f of lb.frontendIPConfigurations ?? []) {
        const rg = frontends.includes(f.name ?? "") ? resourceGroupOf(f.publicIPAddress?.id) : undefined;
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
      holders: clusterHolders(this.services, observed),
    };
  }
}
