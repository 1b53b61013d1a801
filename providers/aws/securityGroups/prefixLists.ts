// The managed prefix lists a Service's NLB group admits (`security-group-prefix-lists`), read for what EC2 weighs
// them at: a rule that references a prefix list counts toward the group's rule quota as the list's maximum number
// of entries, in the list's address family (ruleLimit.ts counts it so). A list that does not exist is refused
// naming the annotation, where EC2 would refuse the rule only once the NLB's group exists. The answer is kept a
// minute in the cluster's reads (../state/clusterReads.ts), like the groups a Service names: prefix lists change
// rarely and a Service is reconciled often.
import {
  DescribeManagedPrefixListsCommand,
  type DescribeManagedPrefixListsCommandInput,
  type ManagedPrefixList,
} from "@aws-sdk/client-ec2";
import { CloudError, ConfigurationError } from "../../errors.ts";
import { call, type AwsClients } from "../clients.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import type { AgedReads } from "../state/agedReads.ts";
import type { PrefixListWeight } from "./ruleLimit.ts";

export class PrefixListReader {
  private readonly clients: AwsClients;
  private readonly kept: AgedReads<Map<string, PrefixListWeight>>;

  constructor(clients: AwsClients, kept: AgedReads<Map<string, PrefixListWeight>>) {
    this.clients = clients;
    this.kept = kept;
  }

  /** Each list's family and maximum entries, by ID. */
  weights(ids: readonly string[]): Promise<Map<string, PrefixListWeight>> {
    return this.kept.get([...ids].sort().join(","), () => this.read(ids));
  }

  private async read(ids: readonly string[]): Promise<Map<string, PrefixListWeight>> {
    // Naming one missing ID fails the whole call; then look them up by filter to name the missing ones.
    const found = await this.describe({ PrefixListIds: [...ids] }).catch((err: unknown) => {
      if (err instanceof CloudError && err.code.includes("NotFound"))
        return this.describe({ Filters: [{ Name: "prefix-list-id", Values: [...ids] }] });
      throw err;
    });
    const missing = ids.filter((id) => !found.some((p) => p.PrefixListId === id));
    if (missing.length)
      throw new ConfigurationError(
        "PrefixListNotFound",
        `metadata.annotations[${AWS_ANNOTATIONS.prefixLists}]`,
        `no managed prefix list ${missing.join(", ")} in the account's region`,
        "name existing prefix list IDs (aws ec2 describe-managed-prefix-lists)",
      );
    return new Map(
      found.map((p): [string, PrefixListWeight] => [
        p.PrefixListId!,
        {
          family: p.AddressFamily === "IPv6" ? "IPv6" : "IPv4",
          // A list that says no maximum weighs at least the one rule that references it.
          maxEntries: p.MaxEntries ?? 1,
        },
      ]),
    );
  }

  private async describe(input: DescribeManagedPrefixListsCommandInput): Promise<ManagedPrefixList[]> {
    const out = await call("ec2:DescribeManagedPrefixLists", () =>
      this.clients.ec2.send(new DescribeManagedPrefixListsCommand(input)),
    );
    return out.PrefixLists ?? [];
  }
}
