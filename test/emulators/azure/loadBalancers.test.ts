// Load balancers through the real @azure/arm-network client: what Azure accepts, what it computes, and what it
// refuses, with Azure's status and error code.
import type { LoadBalancer } from "@azure/arm-network";
import { describe, expect, test } from "vitest";
import {
  FAST,
  LOCATION,
  createPublicIp,
  networkId,
  rejection,
  seedNetwork,
  standardLoadBalancer,
  useTestbed,
} from "./testbed.ts";

let vnetId: string;
let subnetId: string;
let pipId: string;
const RG = "lb-tests";

const tb = useTestbed({}, async (tb) => {
  ({ vnetId, subnetId } = await seedNetwork(tb, RG));
  pipId = await createPublicIp(tb, RG, "pip");
});

const lbId = (name = "lb"): string => networkId(tb, RG, "loadBalancers", name);
const put = (lb: LoadBalancer, name = "lb"): Promise<LoadBalancer> =>
  tb.strict.loadBalancers.createOrUpdate(RG, name, lb, FAST);
const valid = (): LoadBalancer => standardLoadBalancer(tb, RG, "lb", pipId, vnetId);

describe("a correct Standard load balancer", () => {
  test("is accepted with its public frontend, IP-based pool, probes and rules, all provisioned", async () => {
    const lb = await put(valid());
    expect(lb.provisioningState).toBe("Succeeded");
    expect(lb.sku).toEqual({ name: "Standard", tier: "Regional" });
    expect(lb.etag).toMatch(/^W\/"[0-9a-f-]{36}"$/);
    expect(lb.frontendIPConfigurations![0]!.publicIPAddress!.id).toBe(pipId);
    expect(lb.backendAddressPools![0]!.loadBalancerBackendAddresses!.map((a) => a.ipAddress)).toEqual([
      "10.0.1.10",
      "10.0.1.11",
    ]);
    expect(lb.backendAddressPools![0]!.loadBalancerBackendAddresses![0]!.virtualNetwork!.id).toBe(vnetId);
    const rule = lb.loadBalancingRules!.find((r) => r.name === "tcp-80")!;
    // NRP's defaults for what the rule left out.
    expect(rule).toMatchObject({
      idleTimeoutInMinutes: 4,
      enableFloatingIP: false,
      enableTcpReset: false,
      loadDistribution: "Default",
    });
    expect(lb.probes!.find((p) => p.name === "tcp-8443")).toMatchObject({
      intervalInSeconds: 15,
      numberOfProbes: 2,
      probeThreshold: 1,
    });
    // Every child carries its parent's etag and provisioning state.
    for (const child of [
      ...lb.frontendIPConfigurations!,
      ...lb.backendAddressPools!,
      ...lb.probes!,
      ...lb.loadBalancingRules!,
    ]) {
      expect(child.etag).toBe(lb.etag);
      expect(child.provisioningState).toBe("Succeeded");
    }
  });

  test("has its read-only back-references computed by Azure", async () => {
    await put(valid());
    const lb = await tb.network.loadBalancers.get(RG, "lb");
    const ruleIds = (names: string[]): { id: string }[] =>
      names.map((n) => ({ id: `${lbId()}/loadBalancingRules/${n}` }));
    expect(lb.frontendIPConfigurations![0]!.loadBalancingRules).toEqual(ruleIds(["tcp-80", "tcp-443"]));
    expect(lb.backendAddressPools![0]!.loadBalancingRules).toEqual(ruleIds(["tcp-80", "tcp-443"]));
    expect(lb.probes!.find((p) => p.name === "healthz")!.loadBalancingRules).toEqual(ruleIds(["tcp-80"]));
    const pip = await tb.network.publicIPAddresses.get(RG, "pip");
    expect(pip.ipConfiguration!.id).toBe(`${lbId()}/frontendIPConfigurations/fe`);
    expect(pip.ipAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  test("ignores read-only properties sent back in a PUT, as ARM does", async () => {
    const first = await put(valid());
    const again = await put(first);
    expect(again.loadBalancingRules!.map((r) => r.name)).toEqual(["tcp-80", "tcp-443"]);
    expect(again.etag).not.toBe(first.etag);
  });

  test("as an internal load balancer gets the first free address of its subnet, shown on the subnet", async () => {
    const lb = await put({
      location: LOCATION,
      sku: { name: "Standard" },
      frontendIPConfigurations: [
        { name: "a", subnet: { id: subnetId } },
        {
          name: "b",
          subnet: { id: subnetId },
          privateIPAllocationMethod: "Static",
          privateIPAddress: "10.0.1.200",
        },
      ],
    });
    expect(
      lb.frontendIPConfigurations!.map((f) => [f.privateIPAddress, f.privateIPAllocationMethod]),
    ).toEqual([
      ["10.0.1.4", "Dynamic"],
      ["10.0.1.200", "Static"],
    ]);
    const subnet = await tb.network.subnets.get(RG, "vnet", "nodes");
    expect(subnet.ipConfigurations!.map((c) => c.id)).toEqual([
      `${lbId()}/frontendIPConfigurations/a`,
      `${lbId()}/frontendIPConfigurations/b`,
    ]);
    const updated = await put({ ...lb, tags: { touched: "yes" } });
    expect(updated.frontendIPConfigurations![0]!.privateIPAddress).toBe("10.0.1.4");
  });

  test("is listed per resource group and per subscription", async () => {
    await put(valid());
    const inGroup: string[] = [];
    for await (const lb of tb.network.loadBalancers.list(RG)) inGroup.push(lb.name!);
    const all: string[] = [];
    for await (const lb of tb.network.loadBalancers.listAll()) all.push(lb.id!);
    expect(inGroup).toEqual(["lb"]);
    expect(all).toEqual([lbId()]);
  });
});

describe("references are validated", () => {
  const withRule = (
    change: (rule: NonNullable<LoadBalancer["loadBalancingRules"]>[number]) => void,
  ): LoadBalancer => {
    const lb = valid();
    change(lb.loadBalancingRules![0]!);
    return lb;
  };

  test.each([
    [
      "probe",
      (r: NonNullable<LoadBalancer["loadBalancingRules"]>[number]) =>
        (r.probe = { id: `${lbId()}/probes/missing` }),
    ],
    [
      "backend pool",
      (r: NonNullable<LoadBalancer["loadBalancingRules"]>[number]) =>
        (r.backendAddressPool = { id: `${lbId()}/backendAddressPools/missing` }),
    ],
    [
      "frontend",
      (r: NonNullable<LoadBalancer["loadBalancingRules"]>[number]) =>
        (r.frontendIPConfiguration = { id: `${lbId()}/frontendIPConfigurations/missing` }),
    ],
    [
      "probe of another load balancer",
      (r: NonNullable<LoadBalancer["loadBalancingRules"]>[number]) =>
        (r.probe = { id: `${lbId("other")}/probes/healthz` }),
    ],
  ])("a rule referencing a missing %s is InvalidResourceReference", async (_what, change) => {
    const err = await rejection(put(withRule(change)));
    expect(err).toMatchObject({ status: 400, code: "InvalidResourceReference" });
    expect(err.message).toContain(`referenced by resource ${lbId()}/loadBalancingRules/tcp-80 was not found`);
  });

  test("a frontend on a public IP that does not exist is InvalidResourceReference", async () => {
    const lb = standardLoadBalancer(tb, RG, "lb", networkId(tb, RG, "publicIPAddresses", "ghost"), vnetId);
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "InvalidResourceReference" });
  });

  test("a frontend in a subnet that does not exist is InvalidResourceReference", async () => {
    const lb: LoadBalancer = {
      location: LOCATION,
      sku: { name: "Standard" },
      frontendIPConfigurations: [{ name: "fe", subnet: { id: `${vnetId}/subnets/ghost` } }],
    };
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "InvalidResourceReference" });
  });

  test("a backend address in a virtual network that does not exist is InvalidResourceReference", async () => {
    const lb = valid();
    lb.backendAddressPools![0]!.loadBalancerBackendAddresses![0]!.virtualNetwork = {
      id: networkId(tb, RG, "virtualNetworks", "ghost"),
    };
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "InvalidResourceReference" });
  });

  test("a reference that is not a resource ID is LinkedInvalidPropertyId", async () => {
    const lb = valid();
    lb.frontendIPConfigurations![0]!.publicIPAddress = { id: "pip" };
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "LinkedInvalidPropertyId" });
  });

  test("a frontend needs exactly one of a subnet and a public IP", async () => {
    const neither = valid();
    neither.frontendIPConfigurations = [{ name: "fe" }];
    neither.loadBalancingRules = [];
    const both = valid();
    both.frontendIPConfigurations![0]!.subnet = { id: subnetId };
    expect(await rejection(put(neither))).toMatchObject({
      status: 400,
      code: "FrontendIPConfigHasNoSubnetOrPublicIP",
    });
    expect(await rejection(put(both))).toMatchObject({
      status: 400,
      code: "FrontendIPConfigHasBothSubnetAndPublicIP",
    });
  });

  test("one public IP on two frontends is PublicIPReferencedByMultipleIPConfigs", async () => {
    const lb = valid();
    lb.frontendIPConfigurations!.push({ name: "fe2", publicIPAddress: { id: pipId } });
    expect(await rejection(put(lb))).toMatchObject({
      status: 400,
      code: "PublicIPReferencedByMultipleIPConfigs",
    });
  });

  test("a public IP already serving another load balancer is refused", async () => {
    await put(valid());
    const second = standardLoadBalancer(tb, RG, "lb2", pipId, vnetId);
    expect(await rejection(put(second, "lb2"))).toMatchObject({ status: 400, code: "PublicIPAddressInUse" });
  });
});

describe("SKU rules", () => {
  test("a Standard load balancer cannot use a Basic public IP", async () => {
    const basic = await createPublicIp(tb, RG, "basic", "Basic");
    const err = await rejection(put(standardLoadBalancer(tb, RG, "lb", basic, vnetId)));
    expect(err).toMatchObject({ status: 400, code: "PublicIPAndLBSkuDoNotMatch" });
    expect(err.message).toBe(
      `Standard sku load balancer ${lbId()} cannot reference Basic sku publicIP ${basic}.`,
    );
  });

  test("a Basic load balancer cannot use a Standard public IP", async () => {
    const lb = valid();
    lb.sku = { name: "Basic" };
    lb.backendAddressPools![0]!.loadBalancerBackendAddresses = [];
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "PublicIPAndLBSkuDoNotMatch" });
  });

  test("a Standard public IP must be Static", async () => {
    const err = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(
        RG,
        "dyn",
        { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Dynamic" },
        FAST,
      ),
    );
    expect(err).toMatchObject({ status: 400, code: "StandardSkuPublicIPAddressesMustBeStatic" });
  });

  test("IP-based backend pools need a Standard load balancer", async () => {
    const basicPip = await createPublicIp(tb, RG, "basic", "Basic");
    const lb = standardLoadBalancer(tb, RG, "lb", basicPip, vnetId);
    lb.sku = { name: "Basic" };
    expect(await rejection(put(lb))).toMatchObject({
      status: 400,
      code: "IpBasedBackendAddressPoolRequiresStandardSkuLoadBalancer",
    });
  });
});

describe("documented ranges", () => {
  type Change = (lb: LoadBalancer) => void;
  const rule0 = (lb: LoadBalancer): NonNullable<LoadBalancer["loadBalancingRules"]>[number] =>
    lb.loadBalancingRules![0]!;
  const probe0 = (lb: LoadBalancer): NonNullable<LoadBalancer["probes"]>[number] => lb.probes![0]!;
  test.each<[string, Change]>([
    ["frontend port 65535", (lb) => (rule0(lb).frontendPort = 65535)],
    ["backend port 65536", (lb) => (rule0(lb).backendPort = 65536)],
    ["frontend port -1", (lb) => (rule0(lb).frontendPort = -1)],
    ["idle timeout 3 minutes", (lb) => (rule0(lb).idleTimeoutInMinutes = 3)],
    ["idle timeout 101 minutes", (lb) => (rule0(lb).idleTimeoutInMinutes = 101)],
    ["probe interval 4 seconds", (lb) => (probe0(lb).intervalInSeconds = 4)],
    ["probe count 0", (lb) => (probe0(lb).numberOfProbes = 0)],
    ["probe threshold 0", (lb) => (probe0(lb).probeThreshold = 0)],
    ["probe port 0", (lb) => (probe0(lb).port = 0)],
  ])("%s is refused", async (_what, change) => {
    const lb = valid();
    change(lb);
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "InvalidParameterValue" });
  });

  test("port 0 (HA ports) is refused on a public load balancer", async () => {
    const lb = valid();
    Object.assign(rule0(lb), { protocol: "All", frontendPort: 0, backendPort: 0 });
    expect(await rejection(put(lb))).toMatchObject({
      status: 400,
      code: "LoadBalancingRuleWithAnyPortRequiresInternalStandardLoadBalancer",
    });
  });

  test("a TCP probe must not have a request path; an HTTP probe must", async () => {
    const tcpWithPath = valid();
    tcpWithPath.probes![1]!.requestPath = "/healthz";
    const httpWithout = valid();
    delete probe0(httpWithout).requestPath;
    const err = await rejection(put(tcpWithPath));
    expect(err).toMatchObject({ status: 400, code: "ProbeRequestPathIsNotNull" });
    expect(err.message).toBe(
      `Request path for probe ${lbId()}/probes/tcp-8443 must be null when its protocol is Tcp.`,
    );
    expect(await rejection(put(httpWithout))).toMatchObject({ status: 400, code: "ProbeRequestPathIsNull" });
  });

  test("an unknown protocol cannot be parsed: InvalidRequestFormat", async () => {
    const lb = valid();
    rule0(lb).protocol = "Sctp";
    const err = await rejection(put(lb));
    expect(err).toMatchObject({ status: 400, code: "InvalidRequestFormat" });
  });
});

describe("rules may not clash", () => {
  const extraRule = (
    lb: LoadBalancer,
    rule: Partial<NonNullable<LoadBalancer["loadBalancingRules"]>[number]>,
  ): LoadBalancer => {
    lb.loadBalancingRules!.push({ ...lb.loadBalancingRules![0]!, name: "extra", ...rule });
    return lb;
  };

  test("the same frontend port and protocol twice on one frontend is refused", async () => {
    const err = await rejection(put(extraRule(valid(), { backendPort: 9090 })));
    expect(err).toMatchObject({ status: 400, code: "RulesUseSameFrontendIPConfigurationProtocolAndPort" });
  });

  test("the same frontend port over TCP and UDP is fine", async () => {
    const lb = await put(extraRule(valid(), { protocol: "Udp", backendPort: 9090, probe: undefined }));
    expect(lb.loadBalancingRules).toHaveLength(3);
  });

  test("two rules to the same backend port and pool need floating IP", async () => {
    const err = await rejection(put(extraRule(valid(), { frontendPort: 8081 })));
    expect(err).toMatchObject({ status: 400, code: "RulesUseSameBackendPortProtocolAndPool" });
    const dsr = valid();
    dsr.loadBalancingRules![0]!.enableFloatingIP = true;
    const accepted = await put(extraRule(dsr, { frontendPort: 8081, enableFloatingIP: true }));
    expect(accepted.loadBalancingRules).toHaveLength(3);
  });
});

describe("request envelope", () => {
  test("a load balancer without location is LocationRequired", async () => {
    const lb = valid();
    delete lb.location;
    expect(await rejection(put(lb))).toMatchObject({ status: 400, code: "LocationRequired" });
  });

  test("an unknown region is LocationNotAvailableForResourceType", async () => {
    const lb = valid();
    lb.location = "atlantis";
    expect(await rejection(put(lb))).toMatchObject({
      status: 400,
      code: "LocationNotAvailableForResourceType",
    });
  });

  test("a name ending in a hyphen is InvalidResourceName", async () => {
    expect(await rejection(put(valid(), "bad-"))).toMatchObject({ status: 400, code: "InvalidResourceName" });
  });

  test("a missing load balancer is 404 ResourceNotFound; a missing resource group is ResourceGroupNotFound", async () => {
    expect(await rejection(tb.strict.loadBalancers.get(RG, "nope"))).toMatchObject({
      status: 404,
      code: "ResourceNotFound",
    });
    expect(await rejection(tb.strict.loadBalancers.get("no-such-group", "lb"))).toMatchObject({
      status: 404,
      code: "ResourceGroupNotFound",
    });
  });
});
