// A Service whose security-group rules would pass the account's quota is refused before anything is made, naming
// the field that brings them, the count and the limit; what fits, per address family, goes through.
import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { UsageError } from "../../../shared/usageError.ts";
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { build } from "../build.ts";
import { checkIntent } from "../checks.ts";
import type { Network } from "../model.ts";
import { awsSettings } from "../settings.ts";
import type { PrefixListWeight } from "./ruleLimit.ts";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const HTTP: PortIntent = { name: "http", protocol: "TCP", port: 80, nodePort: 30080 };
const HTTPS: PortIntent = { name: "https", protocol: "TCP", port: 443, nodePort: 30443 };
const ranges = (n: number, v6 = false) =>
  Array.from({ length: n }, (_, i) =>
    v6 ? `2001:db8:${i.toString(16)}::/48` : `10.${100 + Math.floor(i / 256)}.${i % 256}.0/24`,
  );

function refusal(
  i: LoadBalancerIntent,
  annotations: Record<string, string> = {},
  rulesPerSecurityGroup?: number,
): ConfigurationError | undefined {
  try {
    checkIntent(
      i,
      parseAwsSettings(annotations, {
        scheme: "internal",
        ...(rulesPerSecurityGroup ? { rulesPerSecurityGroup } : {}),
      }),
    );
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
}

describe("the NLB's own group", () => {
  test("31 ranges on ports 80 and 443 are 62 rules: refused naming the field, the count and the limit", () => {
    const err = refusal(intent({ ports: [HTTP, HTTPS], sourceRanges: ranges(31) }));
    expect(err?.reason).toBe("TooManySecurityGroupRules");
    expect(err?.field).toBe("spec.loadBalancerSourceRanges");
    expect(err?.message).toContain("62 inbound IPv4 rules (31 sources × 2 listener ports and protocols)");
    expect(err?.message).toContain("holds 60 per address family (--aws-rules-per-security-group)");
    expect(err?.fix).toContain("give at most 30 IPv4 ranges");
  });

  test.for([70, 1500])("%i ranges on one port are refused", (n) => {
    expect(refusal(intent({ sourceRanges: ranges(n) }))?.message).toContain(`${n} inbound IPv4 rules`);
  });

  test("what fits goes through: 60 on one port, 30 on two", () => {
    expect(refusal(intent({ sourceRanges: ranges(60) }))).toBeUndefined();
    expect(refusal(intent({ ports: [HTTP, HTTPS], sourceRanges: ranges(30) }))).toBeUndefined();
  });

  test("a TCP_UDP listener is two rules per range", () => {
    const dns: PortIntent[] = [
      { name: "dns-tcp", protocol: "TCP", port: 53, nodePort: 30053 },
      { name: "dns-udp", protocol: "UDP", port: 53, nodePort: 30053 },
    ];
    expect(refusal(intent({ ports: dns, sourceRanges: ranges(31) }))?.message).toContain(
      "62 inbound IPv4 rules",
    );
  });

  test("the families count apart: 40 IPv4 and 40 IPv6 ranges fit a dualstack NLB, 61 IPv6 do not", () => {
    const dualstack = { [`${A}ip-address-type`]: "dualstack" };
    const both = intent({ sourceRanges: [...ranges(40), ...ranges(40, true)] });
    expect(refusal(both, dualstack)).toBeUndefined();
    const v6 = intent({ sourceRanges: ranges(61, true) });
    expect(refusal(v6, dualstack)?.message).toContain("61 inbound IPv6 rules");
  });

  test("everyone on many ports: the ports bring the rules", () => {
    const ports = Array.from({ length: 31 }, (_, i): PortIntent[] => [
      { name: `t${i}`, protocol: "TCP", port: 1000 + i, nodePort: 31000 + i },
      { name: `u${i}`, protocol: "UDP", port: 1000 + i, nodePort: 31000 + i },
    ]).flat();
    const err = refusal(intent({ ports }));
    expect(err?.field).toBe("spec.ports");
    expect(err?.message).toContain("62 inbound IPv4 rules (1 source × 62 listener ports and protocols)");
  });

  test("the annotation that gave the ranges is the field named", () => {
    const field = "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]";
    const err = refusal(intent({ sourceRanges: ranges(61), sourceRangesField: field }));
    expect(err?.field).toBe(field);
  });

  test("a raised quota (--aws-rules-per-security-group) lets more through, and is the limit named", () => {
    expect(refusal(intent({ sourceRanges: ranges(70) }), {}, 200)).toBeUndefined();
    expect(refusal(intent({ sourceRanges: ranges(201) }), {}, 200)?.message).toContain("holds 200");
  });

  test("the user's own groups get no rules from Portico: nothing to count", () => {
    expect(
      refusal(intent({ sourceRanges: ranges(70) }), { [`${A}security-groups`]: "sg-1" }),
    ).toBeUndefined();
  });
});

describe("managed prefix lists weigh their maximum entries, in their family", () => {
  const P = `${A}security-group-prefix-lists`;
  const TWO = intent({ ports: [HTTP, HTTPS] });
  const built = (i: LoadBalancerIntent, weights: Record<string, PrefixListWeight>) =>
    build(
      i,
      {
        settings: parseAwsSettings(
          { [P]: Object.keys(weights).join(","), [`${A}manage-backend-security-group-rules`]: "false" },
          { scheme: "internal" },
        ),
        network: NETWORK,
        prefixLists: new Map(Object.entries(weights)),
      },
      "prod",
    );

  test("a list of 40 on two ports is 80 rules, though Portico writes two: the annotation is named", () => {
    expect(refusal(TWO, { [P]: "pl-1" })).toBeUndefined(); // unread, it is not counted
    expect(() => built(TWO, { "pl-1": { family: "IPv4", maxEntries: 40 } })).toThrow(
      `metadata.annotations[${P}]: the NLB's security group would need 80 inbound IPv4 rules (40 a listener, prefix lists counted at their maximum entries, × 2 listener ports and protocols)`,
    );
  });

  test("beside source ranges, in the lists' own family", () => {
    const ranged = intent({ ports: [HTTP, HTTPS], sourceRanges: ranges(20) });
    expect(
      built(ranged, { "pl-1": { family: "IPv4", maxEntries: 10 } }).desired.securityGroup!.ingress,
    ).toHaveLength(42);
    expect(() => built(ranged, { "pl-1": { family: "IPv4", maxEntries: 11 } })).toThrow(
      /^spec\.loadBalancerSourceRanges: the NLB's security group would need 62 inbound IPv4 rules/,
    );
    // An IPv6 list counts toward the IPv6 rules, of which there are none else.
    expect(() => built(ranged, { "pl-1": { family: "IPv6", maxEntries: 30 } })).not.toThrow();
  });
});

describe("without a group on the NLB (disable-nlb-sg)", () => {
  const network: Network = {
    ...NETWORK,
    cidrs: {
      "subnet-a": { ipv4: ["10.0.0.0/24"], ipv6: [] },
      "subnet-b": { ipv4: ["10.0.1.0/24"], ipv6: [] },
    },
  };
  const built = (n: number) =>
    build(
      intent({ sourceRanges: ranges(n) }),
      {
        settings: parseAwsSettings({ [`${A}disable-nlb-sg`]: "true" }, { scheme: "internal" }),
        network,
        backend: {
          groups: new Map([
            ["i-0000000000000000a", "sg-nodes"],
            ["i-0000000000000000b", "sg-nodes"],
          ]),
          unresolved: [],
        },
      },
      "prod",
    );

  test("the rules this Service alone adds to the targets' group must fit it", () => {
    // Client IP preservation (instance targets): a rule per range, and the health check from the subnets.
    expect(built(58).desired.backendRules).toHaveLength(60);
    expect(() => built(59)).toThrow(
      /security group sg-nodes would need 61 inbound IPv4 rules for this Service alone/,
    );
  });
});

test("the flag: EC2's 60 by default, a raised quota, and nonsense refused", () => {
  const common = { provider: "aws" as const, clusterName: "prod" };
  expect(awsSettings({}, {}, common).rulesPerSecurityGroup).toBe(60);
  expect(awsSettings({ "aws-rules-per-security-group": "200" }, {}, common).rulesPerSecurityGroup).toBe(200);
  for (const bad of ["0", "1.5", "many", "1001"])
    expect(() => awsSettings({ "aws-rules-per-security-group": bad }, {}, common)).toThrow(UsageError);
});
