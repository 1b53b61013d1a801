// A health check aimed where only UDP is served is refused, by name, number or traffic-port, for instance and ip
// targets; what can answer over TCP (kube-proxy's health ports, a TCP port of a mixed Service, a pod's own port)
// is not.
import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { checkIntent } from "../checks.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import { udpOnlyHealthChecks } from "./healthCheckReach.ts";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const PORT = `${A}healthcheck-port`;
const PROTOCOL = `${A}healthcheck-protocol`;
const IP = { [`${A}nlb-target-type`]: "ip" };
const DNS: PortIntent = { name: "dns", protocol: "UDP", port: 53, nodePort: 30053 };
const HTTP: PortIntent = { name: "http", protocol: "TCP", port: 80, nodePort: 30080 };
const UDP_ONLY = intent({ ports: [DNS], endpoints: [{ ip: "10.0.1.5", ports: { dns: 5353 } }] });
const MIXED = intent({
  ports: [HTTP, DNS],
  endpoints: [{ ip: "10.0.1.5", ports: { http: 8080, dns: 5353 } }],
});

const settings = (annotations: Record<string, string>) =>
  parseAwsSettings(annotations, { scheme: "internal" });

function refusal(i: LoadBalancerIntent, annotations: Record<string, string>): ConfigurationError | undefined {
  try {
    checkIntent(i, settings(annotations));
    desiredLoadBalancer(i, settings(annotations), NETWORK, "prod");
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
}

describe("instance targets: kube-proxy listens on a node port for the Service port's own protocol alone", () => {
  test.for([
    ["named", { [PROTOCOL]: "HTTP", [PORT]: "dns" }],
    ["traffic-port", { [PROTOCOL]: "HTTP", [PORT]: "traffic-port" }],
    ["by number", { [PROTOCOL]: "TCP", [PORT]: "30053" }],
    ["with no protocol named", { [PORT]: "dns" }],
  ] as const)("a UDP-only Service's check on its own node port, %s, is refused", ([, annotations]) => {
    const err = refusal(UDP_ONLY, annotations);
    expect(err?.reason).toBe("InvalidHealthCheck");
    expect(err?.field).toBe(`metadata.annotations[${PORT}]`);
    expect(err?.message).toContain("node port 30053, which kube-proxy serves over UDP alone");
    expect(err?.message).toContain(PROTOCOL);
    expect(err?.message).toContain("spec.ports");
  });

  test("a mixed Service: traffic-port reaches the UDP port's node port, a TCP port of the Service is fine", () => {
    expect(refusal(MIXED, { [PORT]: "traffic-port" })?.message).toContain("listener 53's HTTP health check");
    expect(refusal(MIXED, { [PROTOCOL]: "HTTP", [PORT]: "http" })).toBeUndefined();
    expect(refusal(MIXED, { [PORT]: "30080" })).toBeUndefined();
  });

  test("kube-proxy's health ports answer HTTP: the healthCheckNodePort (Local) and 10256", () => {
    const local = intent({ ...UDP_ONLY, externalTrafficPolicy: "Local", healthCheckNodePort: 32100 });
    expect(refusal(local, { [PROTOCOL]: "HTTP", [PORT]: "32100" })).toBeUndefined();
    expect(refusal(UDP_ONLY, { [PROTOCOL]: "HTTP", [PORT]: "10256" })).toBeUndefined();
    // ... but not the traffic port under Local either.
    expect(refusal(local, { [PORT]: "traffic-port" })?.reason).toBe("InvalidHealthCheck");
  });

  test("a TCP and a UDP port of one number share a node port that TCP serves", () => {
    const both = intent({ ports: [{ ...DNS, name: "dns-tcp", protocol: "TCP" }, DNS] });
    for (const port of ["dns", "traffic-port", "30053"])
      expect(refusal(both, { [PROTOCOL]: "HTTP", [PORT]: port })).toBeUndefined();
  });

  test("Portico's defaults for a UDP-only Service are not refused: kube-proxy's HTTP :10256/healthz", () => {
    expect(refusal(UDP_ONLY, {})).toBeUndefined();
    expect(refusal(UDP_ONLY, { [PROTOCOL]: "TCP" })).toBeUndefined();
    expect(
      desiredLoadBalancer(UDP_ONLY, settings({}), NETWORK, "prod").targetGroups[0]!.healthCheck,
    ).toMatchObject({ protocol: "HTTP", port: "10256" });
  });
});

describe("ip targets: the pods' ports are their own", () => {
  test("a check named after a UDP port of the Service is refused", () => {
    const err = refusal(UDP_ONLY, { ...IP, [PROTOCOL]: "HTTP", [PORT]: "dns" });
    expect(err?.message).toContain('the target port of "dns", which the Service serves over UDP alone');
    expect(err?.fix).toContain("a TCP port of the Service by name, or a number");
  });

  test("traffic-port and numbers reach a port the pods may serve over TCP too: not refused", () => {
    expect(refusal(UDP_ONLY, { ...IP, [PORT]: "traffic-port" })).toBeUndefined();
    expect(refusal(UDP_ONLY, { ...IP, [PROTOCOL]: "HTTP", [PORT]: "5353" })).toBeUndefined();
    expect(refusal(UDP_ONLY, IP)).toBeUndefined();
  });

  test("a UDP port name whose target port a TCP port of the Service reaches is served over TCP", () => {
    const shared = intent({
      ports: [HTTP, DNS],
      endpoints: [{ ip: "10.0.1.5", ports: { http: 5353, dns: 5353 } }],
    });
    expect(refusal(shared, { ...IP, [PORT]: "dns" })).toBeUndefined();
    expect(refusal(MIXED, { ...IP, [PORT]: "http" })).toBeUndefined();
  });
});

test("the listeners found, for each protocol the annotations leave them", () => {
  const found = udpOnlyHealthChecks(MIXED, settings({ [PORT]: "traffic-port" }), [
    { port: 53, protocol: "UDP", names: ["dns"] },
    { port: 80, protocol: "TCP", names: ["http"] },
  ]);
  expect(found).toEqual([
    { listener: 53, where: 'node port 30053, which kube-proxy serves over UDP alone ("dns")' },
  ]);
});
