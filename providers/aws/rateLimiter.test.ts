import { describe, expect, test } from "vitest";
import { limitOf, rateLimiterOptionsFromEnv } from "./rateLimiter.ts";

describe("limitOf: EC2's buckets, one per action, sized by category", () => {
  test.each([
    ["DescribeSubnets", {}, "ec2:DescribeSubnets", 100, 20],
    ["DescribeSecurityGroups", {}, "ec2:DescribeSecurityGroups:unfiltered", 50, 10],
    ["DescribeSecurityGroups", { Filters: [{ Name: "tag-key" }] }, "ec2:DescribeSecurityGroups", 100, 20],
    ["DescribeSecurityGroups", { Filters: [] }, "ec2:DescribeSecurityGroups:unfiltered", 50, 10],
    ["DescribeInstances", { MaxResults: 100 }, "ec2:DescribeInstances", 100, 20],
    ["DescribeInstances", { NextToken: "t" }, "ec2:DescribeInstances", 100, 20],
    ["CreateSecurityGroup", {}, "ec2:CreateSecurityGroup", 50, 5],
    ["AuthorizeSecurityGroupIngress", {}, "ec2:AuthorizeSecurityGroupIngress", 50, 5],
    ["RevokeSecurityGroupIngress", {}, "ec2:RevokeSecurityGroupIngress", 50, 5],
    ["CreateTags", {}, "ec2:CreateTags", 100, 10],
  ])("%s %j draws from %s: %d tokens, %d/s", (op, input, bucket, capacity, refillPerSecond) => {
    expect(limitOf("ec2", op, input)).toEqual({ bucket, limit: { capacity, refillPerSecond } });
  });

  test.each([
    ["elbv2", "RegisterTargets", 20, 4],
    ["elbv2", "DeregisterTargets", 20, 4],
    ["elbv2", "DescribeTargetHealth", 40, 10],
    ["elbv2", "CreateLoadBalancer", 20, 3],
    ["elbv2", "ModifyListener", 20, 3],
    ["tagging", "GetResources", 20, 5],
    ["acm", "DescribeCertificate", 100, 20],
  ])("%s %s: %d tokens, %d/s, on a bucket of its own", (service, op, capacity, refillPerSecond) => {
    expect(limitOf(service, op, undefined)).toEqual({
      bucket: `${service}:${op}`,
      limit: { capacity, refillPerSecond },
    });
  });
});

describe("settings from the environment", () => {
  test("on by default, off when asked, and a share read and checked", () => {
    expect(rateLimiterOptionsFromEnv({})).toEqual({});
    expect(rateLimiterOptionsFromEnv({ PORTICO_AWS_RATE_LIMIT: "off" })).toBeUndefined();
    expect(rateLimiterOptionsFromEnv({ PORTICO_AWS_RATE_SHARE: "0.5" })).toEqual({ share: 0.5 });
    expect(() => rateLimiterOptionsFromEnv({ PORTICO_AWS_RATE_SHARE: "2" })).toThrow(
      "PORTICO_AWS_RATE_SHARE=2 is not a share above 0 and at most 1 (e.g. 0.5)",
    );
  });
});
