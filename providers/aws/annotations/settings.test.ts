import { expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAwsSettings } from "./settings.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const parse = (a: Record<string, string>) => parseAwsSettings(a, { scheme: "internal" });

test("defaults match what users of the AWS Load Balancer Controller expect", () => {
  expect(parse({})).toEqual({
    targetType: "instance",
    scheme: "internal",
    subnets: [],
    certificateArns: [],
    backendTls: false,
    loadBalancerAttributes: {},
    targetGroupAttributes: {},
    additionalTags: {},
    ipAddressType: "ipv4",
    healthCheck: {},
    kubeProxyHealthCheck: false,
    proxyProtocolAll: false,
    // EC2's default quota, unless the controller says the account has another.
    rulesPerSecurityGroup: 60,
    securityGroups: [],
    disableNlbSg: false,
    eipAllocations: [],
    privateIPv4Addresses: [],
    ipv6Addresses: [],
    perPortTargetGroupAttributes: {},
    listenerAttributes: {},
    prefixLists: [],
  });
});

test("lists and key=value annotations are split and trimmed", () => {
  const s = parse({
    [`${P}subnets`]: " subnet-1, public-a ",
    [`${P}additional-resource-tags`]: "a=1, b = 2",
    [`${P}attributes`]: "deletion_protection.enabled=true",
  });
  expect(s.subnets).toEqual(["subnet-1", "public-a"]);
  expect(s.additionalTags).toEqual({ a: "1", b: "2" });
  expect(s.loadBalancerAttributes).toEqual({ "deletion_protection.enabled": "true" });
});

test.each([
  [`${P}nlb-target-type`, "pod"],
  [`${P}scheme`, "external"],
  [`${P}internal`, "yes"],
  [`${P}cross-zone-load-balancing-enabled`, "1"],
  [`${P}healthcheck-protocol`, "udp"],
  [`${P}healthcheck-port`, "70000"],
  [`${P}healthcheck-path`, "healthz"],
  [`${P}healthcheck-interval`, "301"],
  [`${P}healthcheck-timeout`, "1"],
  [`${P}healthcheck-healthy-threshold`, "11"],
  [`${P}healthcheck-unhealthy-threshold`, "x"],
  [`${P}healthcheck-success-codes`, "ok"],
  [`${P}target-group-attributes`, "novalue"],
  [`${P}additional-resource-tags`, "=x"],
  [`${P}ip-address-type`, "ipv6"],
  [`${P}name`, "-bad-"],
  [`${P}name`, "this-name-is-far-too-long-for-an-nlb"],
  [`${P}ssl-cert`, "not-an-arn"],
  [`${P}backend-protocol`, "http"],
  [`${P}proxy-protocol`, "80"],
])("%s: %s is refused, naming the annotation", (annotation, value) => {
  let error: unknown;
  try {
    parse({ [annotation]: value });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigurationError);
  expect((error as ConfigurationError).field).toBe(`metadata.annotations[${annotation}]`);
  expect((error as ConfigurationError).fix.length).toBeGreaterThan(5);
});

test("a path with a TCP check parses: the pair is refused with the other combinations (combinations/aws.ts)", () => {
  expect(
    parse({ [`${P}healthcheck-protocol`]: "TCP", [`${P}healthcheck-path`]: "/x" }).healthCheck.path,
  ).toBe("/x");
});

test("success codes: a reversed range, or codes outside 200-599, are refused with the fix", () => {
  expect(() => parse({ [`${P}healthcheck-success-codes`]: "399-200" })).toThrow(/reversed range.*"200-399"/);
  expect(() => parse({ [`${P}healthcheck-success-codes`]: "200,100-199" })).toThrow(/outside 200-599/);
  expect(parse({ [`${P}healthcheck-success-codes`]: "200-399,404" }).healthCheck.successCodes).toBe(
    "200-399,404",
  );
});

test('type: nlb-ip means ip targets unless nlb-target-type says otherwise; "external" changes nothing', () => {
  expect(parse({ [`${P}type`]: "nlb-ip" }).targetType).toBe("ip");
  expect(parse({ [`${P}type`]: "nlb-ip", [`${P}nlb-target-type`]: "instance" }).targetType).toBe("instance");
  expect(parse({ [`${P}type`]: "external" }).targetType).toBe("instance");
});

test("the provider's default target type (ip for a Service without node ports) applies only when no annotation names one", () => {
  const noNodePorts = (a: Record<string, string>) =>
    parseAwsSettings(a, { scheme: "internal", targetType: "ip" }).targetType;
  expect(noNodePorts({})).toBe("ip");
  expect(noNodePorts({ [`${P}nlb-target-type`]: "instance" })).toBe("instance");
  expect(noNodePorts({ [`${P}type`]: "external" })).toBe("ip");
});
