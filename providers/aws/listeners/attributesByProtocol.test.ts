// Target-group attribute values a listener's protocol rules out are refused before anything is made, naming the
// annotation that set them; the same values on a protocol ELBv2 takes them for go through.
import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { checkIntent } from "../checks.ts";
import type { PortIntent } from "../../provider.ts";
import { intent } from "../../../test/unit/support/awsIntent.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const TG = `${P}target-group-attributes`;
const CERT = { [`${P}ssl-cert`]: "arn:aws:acm:us-east-1:123456789012:certificate/c1" };
const DNS: PortIntent[] = [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }];
const DNS_BOTH: PortIntent[] = [
  { name: "dns-tcp", protocol: "TCP", port: 53, nodePort: 30053 },
  { name: "dns-udp", protocol: "UDP", port: 53, nodePort: 30053 },
];
const MIXED: PortIntent[] = [{ name: "http", protocol: "TCP", port: 80, nodePort: 30080 }, ...DNS];

function refusal(annotations: Record<string, string>, ports: PortIntent[]): ConfigurationError | undefined {
  try {
    checkIntent(intent({ ports }), parseAwsSettings(annotations, { scheme: "internal" }));
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
}

describe("attribute values a target group's protocol rules out", () => {
  test.for([
    ["UDP", DNS],
    ["TCP_UDP", DNS_BOTH],
  ] as const)(
    "preserve_client_ip.enabled=false on a %s target group, naming the annotation and the port",
    ([protocol, ports]) => {
      const err = refusal({ [TG]: "preserve_client_ip.enabled=false" }, [...ports]);
      expect(err?.reason).toBe("InvalidAnnotation");
      expect(err?.field).toBe(`metadata.annotations[${TG}]`);
      expect(err?.message).toContain(`impossible to turn off, for ${protocol} target groups`);
      expect(err?.message).toContain(`port 53 is ${protocol}`);
      expect(err?.fix).toContain(`${TG}.<port>`);
    },
  );

  test("preserve_client_ip.enabled=false for a TCP port alone, or true on UDP, is what ELBv2 takes", () => {
    expect(refusal({ [TG]: "preserve_client_ip.enabled=false" }, [intent().ports[0]!])).toBeUndefined();
    expect(refusal({ [`${TG}.80`]: "preserve_client_ip.enabled=false" }, MIXED)).toBeUndefined();
    expect(refusal({ [TG]: "preserve_client_ip.enabled=true" }, DNS)).toBeUndefined();
  });

  test("the per-port annotation that set it is the one named", () => {
    const err = refusal({ [`${TG}.53`]: "preserve_client_ip.enabled=false" }, MIXED);
    expect(err?.field).toBe(`metadata.annotations[${TG}.53]`);
  });

  test("unhealthy-target connection settings on UDP and TCP_UDP target groups", () => {
    for (const ports of [DNS, DNS_BOTH]) {
      const err = refusal(
        { [TG]: "target_health_state.unhealthy.connection_termination.enabled=false" },
        ports,
      );
      expect(err?.message).toContain("no unhealthy-target connection settings");
    }
    expect(
      refusal(
        {
          [TG]: "target_health_state.unhealthy.connection_termination.enabled=false,target_health_state.unhealthy.draining_interval_seconds=30",
        },
        [intent().ports[0]!],
      ),
    ).toBeUndefined();
  });

  test("an unhealthy draining interval without connection termination off, whatever the protocol", () => {
    const err = refusal({ [TG]: "target_health_state.unhealthy.draining_interval_seconds=30" }, [
      intent().ports[0]!,
    ]);
    expect(err?.message).toContain("applies only when");
    expect(err?.fix).toContain("connection_termination.enabled=false");
  });

  test("stickiness on a TLS target group (backend-protocol ssl), but not where TLS ends at the NLB", () => {
    const stuck = { ...CERT, [TG]: "stickiness.enabled=true,stickiness.type=source_ip" };
    const err = refusal({ ...stuck, [`${P}backend-protocol`]: "ssl" }, [intent().ports[0]!]);
    expect(err?.message).toContain("no stickiness on TLS target groups");
    expect(err?.message).toContain("port 80 is a TLS target group");
    expect(refusal(stuck, [intent().ports[0]!])).toBeUndefined();
  });
});
