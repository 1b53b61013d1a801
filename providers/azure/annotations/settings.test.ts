import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { AZURE_ANNOTATIONS as A, parseAzureSettings } from "./settings.ts";

const P = "service.beta.kubernetes.io/";

function refusal(annotations: Record<string, string>, loadBalancerIP?: string): ConfigurationError {
  try {
    parseAzureSettings(annotations, loadBalancerIP);
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected the annotations to be refused");
}

describe("parseAzureSettings", () => {
  it("defaults to a public Service with instance-or-ip and floating IP left open, and no overrides", () => {
    expect(parseAzureSettings({})).toEqual({
      internal: false,
      tcpReset: true,
      probe: {},
      ports: {},
      kubeProxyHealthCheck: false,
      allowedServiceTags: [],
      allowedIpRanges: [],
      denyAllExceptSourceRanges: false,
      disableSecurityRules: false,
      publicIpTags: {},
      ipTags: [],
      ipv6: {},
    });
  });

  it("reads the -ipv6 annotations into the IPv6 side's settings, the address in its canonical form", () => {
    const prefix = "/subscriptions/s/resourceGroups/ips/providers/Microsoft.Network/publicIPPrefixes/v6";
    expect(
      parseAzureSettings({
        [A.ipv6]: "2001:DB8:AC:0:0:0:0:7",
        [A.pipNameIpv6]: "my-v6",
        [A.pipPrefixIdIpv6]: prefix,
      }).ipv6,
    ).toEqual({
      requestedAddress: { address: "2001:db8:ac::7", field: `metadata.annotations[${A.ipv6}]` },
      publicIpName: "my-v6",
      publicIpPrefixId: prefix,
    });
  });

  it("reads cloud-provider-azure's annotations as AKS users write them", () => {
    const s = parseAzureSettings({
      [A.internal]: "True",
      [A.internalSubnet]: "frontends",
      [A.ipv4]: "10.0.2.9",
      [A.idleTimeout]: "30",
      [A.probeProtocol]: "http",
      [A.probeRequestPath]: "/ready",
      [A.probeInterval]: "10",
      [A.probeNumOfProbe]: "3",
      [A.allowedServiceTags]: "AzureFrontDoor.Backend, AzureCloud",
      [A.resourceGroup]: "ips",
      [A.targetType]: "ip",
    });
    expect(s).toMatchObject({
      internal: true,
      internalSubnet: "frontends",
      requestedAddress: { address: "10.0.2.9", field: `metadata.annotations[${A.ipv4}]` },
      idleTimeoutMinutes: 30,
      probe: { protocol: "Http", requestPath: "/ready", intervalSeconds: 10, numberOfProbes: 3 },
      allowedServiceTags: ["AzureFrontDoor.Backend", "AzureCloud"],
      publicIpResourceGroup: "ips",
      targetType: "ip",
    });
  });

  it("ignores the internal subnet of a public Service, as cloud-provider-azure does", () => {
    expect(parseAzureSettings({ [A.internalSubnet]: "frontends" }).internalSubnet).toBeUndefined();
  });

  it("takes spec.loadBalancerIP when the annotation is absent, and refuses the two disagreeing", () => {
    expect(parseAzureSettings({}, "20.1.2.3").requestedAddress).toEqual({
      address: "20.1.2.3",
      field: "spec.loadBalancerIP",
    });
    expect(parseAzureSettings({ [A.ipv4]: "20.1.2.3" }, "20.1.2.3").requestedAddress?.field).toContain(
      A.ipv4,
    );
    expect(refusal({ [A.ipv4]: "20.1.2.3" }, "20.1.2.4").message).toContain("keep one");
    expect(refusal({ [A.ipv4]: "20.1.2.0/24" }).message).toContain("not an IPv4 address");
    // An IPv6 spec.loadBalancerIP is the IPv6 frontend's (refused later for a Service without IPv6: ipFamilies.ts).
    expect(parseAzureSettings({}, "fd00::1").ipv6.requestedAddress?.field).toBe("spec.loadBalancerIP");
    expect(refusal({}, "fd00::/64").field).toBe("spec.loadBalancerIP");
  });

  describe("floating IP", () => {
    it.each([
      [{}, undefined],
      [{ [A.floatingIP]: "true" }, true],
      [{ [A.disableFloatingIP]: "true" }, false],
      [{ [A.disableFloatingIP]: "false" }, true],
      [{ [A.floatingIP]: "false", [A.disableFloatingIP]: "true" }, false],
    ])("%j gives %s", (annotations, expected) => {
      expect(parseAzureSettings(annotations).floatingIP).toBe(expected);
    });

    it("refuses the two annotations contradicting each other", () => {
      expect(refusal({ [A.floatingIP]: "true", [A.disableFloatingIP]: "true" }).message).toContain(
        "contradicts",
      );
    });
  });

  it("reads per-port probe settings, no-rule and no-probe", () => {
    const s = parseAzureSettings({
      [`${P}port_443_health-probe_protocol`]: "https",
      [`${P}port_443_health-probe_port`]: "status",
      [`${P}port_443_health-probe_request-path`]: "/healthz/ready",
      [`${P}port_443_health-probe_interval`]: "7",
      [`${P}port_443_health-probe_num-of-probe`]: "4",
      [`${P}port_15021_no_lb_rule`]: "true",
      [`${P}port_53_no_probe_rule`]: "true",
    });
    expect(s.ports).toEqual({
      443: {
        protocol: "Https",
        port: "status",
        requestPath: "/healthz/ready",
        intervalSeconds: 7,
        numberOfProbes: 4,
      },
      15021: { noRule: true },
      53: { noProbe: true },
    });
  });

  it("reads the tags of a public IP Portico makes, and keeps Portico's own tag names for itself", () => {
    expect(parseAzureSettings({ [A.pipTags]: "team=web, cost-center = 42" }).publicIpTags).toEqual({
      team: "web",
      "cost-center": "42",
    });
    expect(refusal({ [A.pipTags]: "portico.io-cluster=x" }).message).toContain("cannot be a tag name");
    expect(refusal({ [A.pipTags]: "a/b=c" }).message).toContain("cannot be a tag name");
    expect(refusal({ [A.pipTags]: "novalue" }).message).toContain("key=value");
  });

  it.each([
    [{ [A.internal]: "yes" }, A.internal, "not a boolean"],
    [{ [A.targetType]: "pod" }, A.targetType, "use one of instance, ip"],
    [{ [A.idleTimeout]: "3" }, A.idleTimeout, "from 4 to 100"],
    [{ [A.idleTimeout]: "101" }, A.idleTimeout, "from 4 to 100"],
    [{ [A.probeProtocol]: "udp" }, A.probeProtocol, "Tcp, Http, Https"],
    [{ [A.probeRequestPath]: "healthz" }, A.probeRequestPath, 'start it with "/"'],
    [{ [A.probeInterval]: "4" }, A.probeInterval, "from 5 to 120"],
    [{ [A.probeNumOfProbe]: "0" }, A.probeNumOfProbe, "from 1 to 24"],
    [{ [A.probeInterval]: "60", [A.probeNumOfProbe]: "3" }, A.probeInterval, "120 seconds"],
    [{ [A.pipName]: "bad name!" }, A.pipName, "not a valid Azure resource name"],
    [{ [A.internal]: "true", [A.pipName]: "ip" }, A.pipName, "the Service is internal"],
    [{ [A.internal]: "true", [A.internalSubnet]: "-x" }, A.internalSubnet, "not a valid Azure resource name"],
    [{ [A.allowedServiceTags]: "Azure Cloud" }, A.allowedServiceTags, "not a service tag"],
    [{ [A.kubeProxyHealthCheck]: "1" }, A.kubeProxyHealthCheck, "not a boolean"],
    [{ [`${P}azure-pip-prefix-id-ipv6`]: "/x" }, `${P}azure-pip-prefix-id-ipv6`, "not a public IP prefix"],
    [{ [`${P}azure-load-balancer-ipv6`]: "10.0.0.1" }, `${P}azure-load-balancer-ipv6`, "not an IPv6 address"],
    [
      { [`${P}azure-load-balancer-ipv6`]: "fd00::/64" },
      `${P}azure-load-balancer-ipv6`,
      "not an IPv6 address",
    ],
    [{ [`${P}azure-pip-name-ipv6`]: "bad name!" }, `${P}azure-pip-name-ipv6`, "not a public IP name"],
    [{ [A.internal]: "true", [A.pipNameIpv6]: "v6" }, A.pipNameIpv6, "the Service is internal"],
    [{ [`${P}port_80_health-probe_colour`]: "red" }, `${P}port_80_health-probe_colour`, "per-port setting"],
    [{ [`${P}port_80_health-probe_port`]: "Not_A_Port" }, `${P}port_80_health-probe_port`, "port name"],
    [{ [`${P}port_80_no_lb_rule`]: "maybe" }, `${P}port_80_no_lb_rule`, "not a boolean"],
  ])("refuses %j, naming %s", (annotations, annotation, problem) => {
    const err = refusal(annotations);
    expect(err.reason).toBe("InvalidAnnotation");
    expect(err.field).toBe(`metadata.annotations[${annotation}]`);
    expect(err.message).toContain(problem);
  });
});
