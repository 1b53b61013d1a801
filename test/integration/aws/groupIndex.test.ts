// Security groups and per-Service backend rules are read for the whole cluster at once, not once per Service:
// EC2 answers both reads by scanning every group, so per Service they cost as much as everything else together.
import { expect, test } from "../../harness/index.ts";
import { awsWorld, directProvider, intentFor, writesDuring } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const GROUP_READS = ["ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules"];

test("a Service's group and rules come from the cluster's index; one Portico changed is read alone until the index is read again", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const provider = directProvider(cluster);
  const reads = async (fn: () => Promise<unknown>) => {
    const before = new Map(provider.clients.calls);
    await fn();
    return GROUP_READS.map((op) => (provider.clients.calls.get(op) ?? 0) - (before.get(op) ?? 0));
  };
  const a = intentFor(world, "a");
  const b = intentFor(world, "b");
  // The first reconcile reads the index (one call each) and finds nothing: the group is made.
  await provider.ensure(a);
  // Portico changed a's group: it is read alone (by name), and found as made — nothing is written again.
  let writes: Record<string, number> = {};
  expect(await reads(async () => (writes = await writesDuring(provider, () => provider.ensure(a))))).toEqual([
    1, 1,
  ]);
  expect(writes).toEqual({});
  // Another Service, new: the index (still fresh) says it has nothing, without a read.
  expect(await reads(() => provider.ensure(b))).toEqual([0, 0]);
  expect((await inventory(aws)).securityGroups).toHaveLength(2);
  // An untouched Service's group as the index holds it: a no-change reconcile reads nothing and writes nothing.
  const other = directProvider(cluster);
  await other.ensure(a);
  const before = new Map(other.clients.calls);
  expect(await writesDuring(other, () => other.ensure(b))).toEqual({});
  expect(GROUP_READS.map((op) => (other.clients.calls.get(op) ?? 0) - (before.get(op) ?? 0))).toEqual([0, 0]);
});
