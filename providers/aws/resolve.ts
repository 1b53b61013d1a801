// The first stage of an AWS pass: every read the Service's desired NLB depends on, made before anything is built —
// its subnets, the security groups and managed prefix lists it names, its certificates, and its targets' own
// security groups (with the VPC's CIDRs where the rules name them). Each answer is kept across Services in the
// cluster's reads (state/clusterReads.ts), which the resolver holds so that a new leadership term drops them all
// at once; the build that follows (build.ts) reads nothing.
import type { LoadBalancerIntent } from "../provider.ts";
import type { AwsServiceSettings } from "./annotations/settings.ts";
import { BackendGroupResolver, type Unresolved, type VpcCidrs } from "./securityGroups/backendGroups.ts";
import { CertificateChecker } from "./listeners/certificateCheck.ts";
import type { AwsClients } from "./clients.ts";
import { targetIds } from "./targetGroups/desired.ts";
import type { Network } from "./model.ts";
import { SubnetResolver } from "./network/subnets.ts";
import { PrefixListReader } from "./securityGroups/prefixLists.ts";
import type { PrefixListWeight } from "./securityGroups/ruleLimit.ts";
import { UserSecurityGroups } from "./securityGroups/userGroups.ts";
import { ClusterReads } from "./state/clusterReads.ts";

/** What the account says the Service's NLB is built from. */
export interface Resolved {
  /** The settings, with the security groups a user named by name resolved to IDs. */
  settings: AwsServiceSettings;
  network: Network;
  /** The managed prefix lists the NLB's own group admits, with what each weighs in its rule quota. */
  prefixLists?: ReadonlyMap<string, PrefixListWeight>;
  /** Present when Portico manages the rules that admit the NLB to its targets. */
  backend?: {
    /** Each target's own security group. */
    groups: Map<string, string>;
    /** Targets without one, and why (said in plan; the pass goes on without their rules). */
    unresolved: Unresolved[];
    /** Without an NLB security group, an internal NLB's clients are named by the VPC's CIDRs. */
    vpcCidrs?: VpcCidrs;
  };
}

export class AwsResolver {
  private readonly kept = new ClusterReads();
  private readonly subnets: SubnetResolver;
  private readonly userGroups: UserSecurityGroups;
  private readonly certificates: CertificateChecker;
  private readonly backendGroups: BackendGroupResolver;
  private readonly prefixLists: PrefixListReader;

  constructor(clients: AwsClients, cluster: string) {
    this.subnets = new SubnetResolver(clients, cluster, this.kept.subnets);
    this.userGroups = new UserSecurityGroups(clients, this.kept.userGroups);
    this.certificates = new CertificateChecker(clients.acm, this.kept.certificates);
    this.backendGroups = new BackendGroupResolver(clients, cluster, {
      groups: this.kept.backendGroups,
      vpcs: this.kept.vpcCidrs,
    });
    this.prefixLists = new PrefixListReader(clients, this.kept.prefixLists);
  }

  async resolve(intent: LoadBalancerIntent, given: AwsServiceSettings): Promise<Resolved> {
    const network = await this.subnets.resolve(given.scheme, given.subnets);
    const settings = given.securityGroups.length
      ? { ...given, securityGroups: await this.userGroups.resolve(given.securityGroups, network.vpcId) }
      : given;
    await this.certificates.check(settings.certificateArns);
    // (Prefix lists go on Portico's own group alone: with the user's groups or none they are refused as combinations.)
    const prefixLists = settings.prefixLists.length
      ? { prefixLists: await this.prefixLists.weights(settings.prefixLists) }
      : {};
    if (!managesBackendRules(settings)) return { settings, network, ...prefixLists };
    const { groups, unresolved } = await this.backendGroups.resolve(
      settings.targetType,
      targetIds(intent, settings),
      network.vpcId,
    );
    // Without a group of the NLB's to name, an internal NLB open to all is reached from anywhere in the VPC.
    const needsVpc = settings.disableNlbSg && settings.scheme === "internal" && !intent.sourceRanges.length;
    const vpcCidrs = needsVpc ? await this.backendGroups.vpcCidrs(network.vpcId) : undefined;
    return {
      settings,
      network,
      ...prefixLists,
      backend: { groups, unresolved, ...(vpcCidrs ? { vpcCidrs } : {}) },
    };
  }

  /** Nothing cached is trusted any more (a new leadership term). */
  forget(): void {
    this.kept.forget();
  }
}

/** As the AWS Load Balancer Controller: on by default with Portico's own group, off with the user's. */
export function managesBackendRules(settings: AwsServiceSettings): boolean {
  return settings.manageBackendRules ?? !settings.securityGroups.length;
}
