// The emulated AWS throttle: the token bucket's arithmetic, which bucket each request draws from, the share
// left to the rest of the account, the floor the buckets impose, and the answers the SDK must read as AWS's.
import { EC2Client, DescribeVpcsCommand } from "@aws-sdk/client-ec2";
import {
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { describe, expect, test } from "vitest";
import {
  AwsThrottle,
  bucketOf,
  floorOf,
  signerOf,
  throttleAnswer,
  throttleOptionsFromEnv,
  TokenBucket,
  type AwsApi,
} from "../harness/awsThrottle.ts";
import { startFaultProxy } from "../harness/faultProxy.ts";

const none = new URLSearchParams();
const req = (api: AwsApi, action: string, params = none, account = "A") => ({ api, action, account, params });

describe("TokenBucket", () => {
  test("starts full and lets exactly its capacity through at once", () => {
    const b = new TokenBucket({ capacity: 3, refillPerSecond: 1 }, 0);
    expect([b.take(0), b.take(0), b.take(0), b.take(0)]).toEqual([true, true, true, false]);
  });

  test("refills at its rate, fractions included, and a fraction of a token is not a token", () => {
    const b = new TokenBucket({ capacity: 2, refillPerSecond: 0.3 }, 0);
    b.take(0);
    b.take(0);
    expect(b.take(3)).toBe(false); // 0.9 tokens
    expect(b.available(3.4)).toBeCloseTo(1.02);
    expect(b.take(3.4)).toBe(true);
    expect(b.available(3.4)).toBeCloseTo(0.02);
  });

  test("never holds more than its capacity, however long it rests", () => {
    const b = new TokenBucket({ capacity: 5, refillPerSecond: 20 }, 0);
    expect(b.available(1000)).toBe(5);
    for (let i = 0; i < 5; i++) expect(b.take(1000)).toBe(true);
    expect(b.take(1000)).toBe(false);
  });

  test("sustains exactly its refill rate once empty", () => {
    const b = new TokenBucket({ capacity: 100, refillPerSecond: 20 }, 0);
    let admitted = 0;
    // 100 requests a second for 10 seconds, asked every 10 ms.
    for (let t = 0; t < 1000; t++) if (b.take(t / 100)) admitted++;
    // The burst, then every whole token refilled by the last ask at 9.99 s: 100 + 199.8, floored.
    expect(admitted).toBe(299);
  });

  test("a clock that steps back adds nothing", () => {
    const b = new TokenBucket({ capacity: 1, refillPerSecond: 1 }, 10);
    expect(b.take(10)).toBe(true);
    expect(b.take(5)).toBe(false);
    expect(b.available(10.5)).toBeCloseTo(0.5);
  });

  test("refuses a shape that could never admit a request", () => {
    expect(() => new TokenBucket({ capacity: 0, refillPerSecond: 1 }, 0)).toThrow(/positive capacity/);
    expect(() => new TokenBucket({ capacity: 1, refillPerSecond: 0 }, 0)).toThrow(/refill rate/);
    expect(() => new TokenBucket({ capacity: Number.NaN, refillPerSecond: 1 }, 0)).toThrow();
  });
});

describe("bucketOf: AWS's documented EC2 buckets, one per action", () => {
  test.each([
    ["DescribeSubnets", none, "non-mutating", 100, 20],
    ["GetManagedPrefixListEntries", none, "non-mutating", 100, 20],
    ["DescribeInstances", none, "unfiltered-non-mutating", 50, 10],
    ["DescribeSecurityGroups", none, "unfiltered-non-mutating", 50, 10],
    ["DescribeSecurityGroups", new URLSearchParams({ "Filter.1.Name": "tag:x" }), "non-mutating", 100, 20],
    ["DescribeInstances", new URLSearchParams({ MaxResults: "100" }), "non-mutating", 100, 20],
    ["DescribeInstances", new URLSearchParams({ NextToken: "t" }), "non-mutating", 100, 20],
    ["CreateSecurityGroup", none, "mutating", 50, 5],
    ["DeleteSecurityGroup", none, "mutating", 50, 5],
    ["AuthorizeSecurityGroupIngress", none, "resource-intensive", 50, 5],
    ["RevokeSecurityGroupIngress", none, "resource-intensive", 50, 5],
    ["CreateTags", none, "uncategorized", 100, 10],
    ["DeleteTags", none, "uncategorized", 100, 10],
    ["CreateVpcEndpoint", none, "uncategorized", 4, 0.3],
  ])("%s %s: %s, %d tokens refilling %d/s", (action, params, category, capacity, refillPerSecond) => {
    const b = bucketOf({ api: "ec2", action, params });
    expect(b).toMatchObject({ category, spec: { capacity, refillPerSecond } });
  });

  test("each action has a bucket of its own, and an unfiltered call one apart from the filtered", () => {
    const names = [
      bucketOf({ api: "ec2", action: "DescribeSubnets", params: none }).name,
      bucketOf({ api: "ec2", action: "DescribeVpcs", params: none }).name,
      bucketOf({ api: "ec2", action: "DescribeInstances", params: none }).name,
      bucketOf({ api: "ec2", action: "DescribeInstances", params: new URLSearchParams({ MaxResults: "5" }) })
        .name,
    ];
    expect(new Set(names).size).toBe(4);
  });
});

describe("bucketOf: the stated choice for ELBv2 and tagging", () => {
  test.each([
    ["elbv2", "RegisterTargets", 20, 4],
    ["elbv2", "DeregisterTargets", 20, 4],
    ["elbv2", "DescribeTargetHealth", 40, 10],
    ["elbv2", "DescribeLoadBalancers", 40, 10],
    ["elbv2", "ModifyTargetGroupAttributes", 20, 3],
    ["elbv2", "CreateLoadBalancer", 20, 3],
    ["elbv2", "AddTags", 20, 3],
    ["tagging", "GetResources", 20, 5],
  ] as const)("%s %s: %d tokens refilling %d/s", (api, action, capacity, refillPerSecond) => {
    expect(bucketOf({ api, action, params: none }).spec).toEqual({ capacity, refillPerSecond });
  });
});

describe("AwsThrottle", () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (s: number) => (t += s) };
  };

  test("throttles one action without touching another or another account", () => {
    const c = clock();
    const t = new AwsThrottle({ now: c.now });
    for (let i = 0; i < 20; i++) expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(true);
    expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(false);
    expect(t.admit(req("elbv2", "DeregisterTargets"))).toBe(true);
    expect(t.admit(req("elbv2", "RegisterTargets", none, "B"))).toBe(true);
    c.advance(0.25);
    expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(true);
    expect(t.counts.get("elbv2:RegisterTargets")).toMatchObject({ admitted: 22, throttled: 1 });
    expect(t.throttled()).toBe(1);
  });

  test("the reserve leaves Portico that share less of both burst and rate", () => {
    const c = clock();
    const t = new AwsThrottle({ now: c.now, reserve: 0.5 });
    expect(t.specOf(req("ec2", "CreateSecurityGroup")).spec).toEqual({ capacity: 25, refillPerSecond: 2.5 });
    for (let i = 0; i < 25; i++) expect(t.admit(req("ec2", "CreateSecurityGroup"))).toBe(true);
    expect(t.admit(req("ec2", "CreateSecurityGroup"))).toBe(false);
    c.advance(0.4);
    expect(t.admit(req("ec2", "CreateSecurityGroup"))).toBe(true);
  });

  test("scale and overrides (by bucket, then by category) change the figures; a bucket keeps one token", () => {
    const t = new AwsThrottle({
      scale: 0.1,
      overrides: {
        "ec2:DescribeSubnets": { capacity: 7, refillPerSecond: 70 },
        "ec2:mutating": { capacity: 30, refillPerSecond: 3 },
      },
    });
    expect(t.specOf(req("ec2", "DescribeSubnets")).spec).toEqual({ capacity: 1, refillPerSecond: 7 });
    expect(t.specOf(req("ec2", "CreateSecurityGroup")).spec.capacity).toBeCloseTo(3);
    expect(t.specOf(req("ec2", "CreateSecurityGroup")).spec.refillPerSecond).toBeCloseTo(0.3);
    expect(t.specOf(req("elbv2", "DescribeListeners")).spec.capacity).toBeCloseTo(4);
  });

  test("refuses a reserve of the whole bucket and a non-positive scale", () => {
    expect(() => new AwsThrottle({ reserve: 1 })).toThrow(/reserve/);
    expect(() => new AwsThrottle({ reserve: -0.1 })).toThrow(/reserve/);
    expect(() => new AwsThrottle({ scale: 0 })).toThrow(/scale/);
  });

  test("reset fills the buckets again and forgets the counts", () => {
    const t = new AwsThrottle({ now: () => 0, scale: 0.05 }); // RegisterTargets: 1 token
    expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(true);
    expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(false);
    t.reset();
    expect(t.counts.size).toBe(0);
    expect(t.admit(req("elbv2", "RegisterTargets"))).toBe(true);
  });

  test("the floor is the slowest bucket's calls beyond its burst over its refill rate", () => {
    const t = new AwsThrottle({ now: () => 0 });
    for (let i = 0; i < 60; i++) t.admit(req("elbv2", "CreateLoadBalancer")); // 20 admitted
    expect(t.floor()).toEqual({ seconds: 0, bucket: undefined });
    const counts = new Map([
      ["elbv2:CreateLoadBalancer", { spec: { capacity: 20, refillPerSecond: 3 }, admitted: 1020 }],
      ["elbv2:RegisterTargets", { spec: { capacity: 20, refillPerSecond: 4 }, admitted: 1020 }],
      ["ec2:DescribeSubnets", { spec: { capacity: 100, refillPerSecond: 20 }, admitted: 50 }],
    ]);
    expect(floorOf(counts).bucket).toBe("elbv2:CreateLoadBalancer");
    expect(floorOf(counts).seconds).toBeCloseTo(1000 / 3);
  });
});

describe("settings from the environment", () => {
  test("off unless PORTICO_AWS_THROTTLE is on", () => {
    expect(throttleOptionsFromEnv({})).toBeUndefined();
    expect(throttleOptionsFromEnv({ PORTICO_AWS_THROTTLE: "0" })).toBeUndefined();
    expect(throttleOptionsFromEnv({ PORTICO_AWS_THROTTLE: "off" })).toBeUndefined();
    expect(throttleOptionsFromEnv({ PORTICO_AWS_THROTTLE: "1" })).toEqual({});
  });

  test("reads the reserve and the scale, and names a bad value", () => {
    expect(
      throttleOptionsFromEnv({
        PORTICO_AWS_THROTTLE: "1",
        PORTICO_AWS_THROTTLE_RESERVE: "0.3",
        PORTICO_AWS_THROTTLE_SCALE: "0.1",
      }),
    ).toEqual({ reserve: 0.3, scale: 0.1 });
    expect(() =>
      throttleOptionsFromEnv({ PORTICO_AWS_THROTTLE: "1", PORTICO_AWS_THROTTLE_RESERVE: "1" }),
    ).toThrow("PORTICO_AWS_THROTTLE_RESERVE=1 is not a number from 0 to 0.99");
    expect(() =>
      throttleOptionsFromEnv({ PORTICO_AWS_THROTTLE: "1", PORTICO_AWS_THROTTLE_SCALE: "fast" }),
    ).toThrow(/PORTICO_AWS_THROTTLE_SCALE=fast/);
  });
});

describe("who is asking", () => {
  test.each([
    ["ec2", "ec2"],
    ["elasticloadbalancing", "elbv2"],
    ["tagging", "tagging"],
    ["acm", "acm"],
    ["sts", "other"],
  ])("a request signed for %s is %s, on the signer's account", (service, api) => {
    const auth = `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261124/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=x`;
    expect(signerOf(auth)).toEqual({ api, account: "AKIDEXAMPLE" });
  });

  test("an unsigned request is nobody's in particular", () => {
    expect(signerOf(undefined)).toEqual({ api: "other", account: "anonymous" });
  });
});

describe("the answers, as the AWS SDK reads them", () => {
  test.each([
    ["ec2", 503, "RequestLimitExceeded"],
    ["elbv2", 400, "<Code>Throttling</Code>"],
    ["tagging", 400, "ThrottlingException"],
  ] as const)("%s: HTTP %d with %s", (api, status, code) => {
    const a = throttleAnswer(api, "r1");
    expect(a.status).toBe(status);
    expect(a.body).toContain(code);
  });

  // A proxy with one-token buckets in front of nothing: the first call of each action is let through (and
  // fails to reach the absent emulator), the second is throttled, and each SDK must name it as AWS does.
  test("each SDK client reads its service's throttling error", async () => {
    const proxy = await startFaultProxy("http://127.0.0.1:9", { throttle: { scale: 0.001 } });
    try {
      const config = {
        endpoint: proxy.url,
        region: "us-east-1",
        maxAttempts: 1,
        credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "s" },
      };
      const errorOf = async (send: () => Promise<unknown>) => {
        await send().catch(() => undefined);
        return send().then(
          () => undefined,
          (e: { name: string; $metadata?: { httpStatusCode?: number } }) => [
            e.name,
            e.$metadata?.httpStatusCode,
          ],
        );
      };
      const ec2 = new EC2Client(config);
      const elbv2 = new ElasticLoadBalancingV2Client(config);
      const tagging = new ResourceGroupsTaggingAPIClient(config);
      expect(await errorOf(() => ec2.send(new DescribeVpcsCommand({})))).toEqual([
        "RequestLimitExceeded",
        503,
      ]);
      expect(await errorOf(() => elbv2.send(new DescribeLoadBalancersCommand({})))).toEqual([
        "Throttling",
        400,
      ]);
      expect(await errorOf(() => tagging.send(new GetResourcesCommand({})))).toEqual([
        "ThrottlingException",
        400,
      ]);
      expect(proxy.throttle?.throttled()).toBe(3);
    } finally {
      await proxy.close();
    }
  });
});
