import { DescribeInstancesCommand, DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withPriority } from "../../priority.ts";
import type { AwsClients } from "../clients.ts";
import { CLUSTER_CACHE_MS } from "../state/cacheAge.ts";
import { ClusterReads } from "../state/clusterReads.ts";
import { BackendGroupResolver } from "./backendGroups.ts";

/** An EC2 client whose instances each have one group, sg-<instance>, and whose calls are recorded. */
function fakeEc2() {
  const ec2 = new EC2Client({ region: "us-east-1", credentials: { accessKeyId: "a", secretAccessKey: "b" } });
  const asked: string[][] = [];
  let fail: Error | undefined;
  let release: () => void = () => undefined;
  let held: Promise<void> | undefined;
  const send = vi.fn(async (command: unknown): Promise<unknown> => {
    if (held) await held;
    if (fail) throw fail;
    if (command instanceof DescribeInstancesCommand) {
      const ids = command.input.Filters![0]!.Values!;
      asked.push(ids);
      return {
        Reservations: [
          {
            Instances: ids.map((id) => ({
              InstanceId: id,
              NetworkInterfaces: [{ Attachment: { DeviceIndex: 0 }, Groups: [{ GroupId: `sg-${id}` }] }],
            })),
          },
        ],
      };
    }
    if (command instanceof DescribeVpcsCommand) {
      asked.push(["vpc"]);
      return { Vpcs: [{ CidrBlock: "10.0.0.0/16" }] };
    }
    throw new Error("unexpected call");
  });
  Object.assign(ec2, { send });
  const clients = { ec2 } as unknown as AwsClients;
  return {
    clients,
    send,
    asked,
    failWith: (err: Error | undefined) => {
      fail = err;
    },
    hold: () => {
      held = new Promise((r) => (release = r));
    },
    release: () => {
      held = undefined;
      release();
    },
  };
}

function resolverWith(fake: ReturnType<typeof fakeEc2>, kept = new ClusterReads()) {
  return new BackendGroupResolver(fake.clients, "c1", { groups: kept.backendGroups, vpcs: kept.vpcCidrs });
}

describe("BackendGroupResolver over the cluster's kept reads", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reads the targets once, then answers from what is kept", async () => {
    const fake = fakeEc2();
    const resolver = resolverWith(fake);
    const first = await resolver.resolve("instance", ["i-2", "i-1", "i-2"], "vpc-1");
    expect([...first.groups]).toEqual([
      ["i-2", "sg-i-2"],
      ["i-1", "sg-i-1"],
    ]);
    expect(first.unresolved).toEqual([]);
    await resolver.resolve("instance", ["i-1", "i-2"], "vpc-1");
    expect(fake.asked).toEqual([["i-1", "i-2"]]);
  });

  it("looks up only the targets not known yet, sorted, and keys them by VPC", async () => {
    const fake = fakeEc2();
    const resolver = resolverWith(fake);
    await resolver.resolve("instance", ["i-1"], "vpc-1");
    await resolver.resolve("instance", ["i-3", "i-1", "i-2"], "vpc-1");
    await resolver.resolve("instance", ["i-1"], "vpc-2");
    expect(fake.asked).toEqual([["i-1"], ["i-2", "i-3"], ["i-1"]]);
  });

  it("shares one lookup among reconciles asking at once", async () => {
    const fake = fakeEc2();
    const resolver = resolverWith(fake);
    fake.hold();
    const a = resolver.resolve("instance", ["i-1", "i-2"], "vpc-1");
    const b = resolver.resolve("instance", ["i-2", "i-1"], "vpc-1");
    fake.release();
    expect((await a).groups).toEqual((await b).groups);
    expect(fake.asked).toEqual([["i-1", "i-2"]]);
  });

  it("reads again what a background pass finds a minute old, and what a new term forgot", async () => {
    vi.useFakeTimers({ now: 0 });
    const fake = fakeEc2();
    const kept = new ClusterReads();
    const resolver = resolverWith(fake, kept);
    await resolver.resolve("instance", ["i-1"], "vpc-1");
    await resolver.vpcCidrs("vpc-1");
    vi.advanceTimersByTime(CLUSTER_CACHE_MS);
    await withPriority("user", () => resolver.resolve("instance", ["i-1"], "vpc-1"));
    await withPriority("user", () => resolver.vpcCidrs("vpc-1"));
    expect(fake.asked).toHaveLength(2);
    await withPriority("background", () => resolver.resolve("instance", ["i-1"], "vpc-1"));
    await withPriority("background", () => resolver.vpcCidrs("vpc-1"));
    expect(fake.asked).toHaveLength(4);
    kept.forget();
    await resolver.resolve("instance", ["i-1"], "vpc-1");
    await resolver.vpcCidrs("vpc-1");
    expect(fake.asked).toEqual([["i-1"], ["vpc"], ["i-1"], ["vpc"], ["i-1"], ["vpc"]]);
  });

  it("keeps nothing of a failed lookup", async () => {
    const fake = fakeEc2();
    const resolver = resolverWith(fake);
    fake.failWith(new Error("throttled"));
    await expect(resolver.resolve("instance", ["i-1"], "vpc-1")).rejects.toThrow();
    await expect(resolver.vpcCidrs("vpc-1")).rejects.toThrow();
    fake.failWith(undefined);
    expect((await resolver.resolve("instance", ["i-1"], "vpc-1")).groups.get("i-1")).toBe("sg-i-1");
    expect(await resolver.vpcCidrs("vpc-1")).toEqual({ ipv4: ["10.0.0.0/16"], ipv6: [] });
    expect(fake.asked).toEqual([["i-1"], ["vpc"]]);
  });

  it("says why a target has no group", async () => {
    const fake = fakeEc2();
    const resolver = resolverWith(fake);
    fake.send.mockImplementationOnce(() => Promise.resolve({ Reservations: [] }));
    const out = await resolver.resolve("instance", ["i-9"], "vpc-1");
    expect(out.groups.size).toBe(0);
    expect(out.unresolved).toEqual([{ target: "i-9", reason: "no network interface in the VPC holds i-9" }]);
  });
});
