// What Azure documents as limits, refused through the real @azure/arm-network client with ARM's status and code:
// the tags of any resource, and the networking limits a cluster that puts many Services on one load balancer and
// one security group can reach. Each test sets a small limit, so a few resources reach it.
import type { LoadBalancer, SecurityRule } from "@azure/arm-network";
import { describe, expect, test } from "vitest";
import { DOCUMENTED_LIMITS, LIMITS_ENV, startAzureEmulator } from "./index.ts";
import type { Limits } from "./index.ts";
import {
  FAST,
  LOCATION,
  createPublicIp,
  networkId,
  rejection,
  seedNetwork,
  subscriptionPath,
  useTestbed,
} from "./testbed.ts";

let vnetId: string;
let subnetId: string;
const RG = "limit-tests";

const tb = useTestbed({}, async (tb) => {
  ({ vnetId, subnetId } = await seedNetwork(tb, RG));
});

const limit = (limits: Partial<Limits>): void => tb.azure.configure({ limits });

describe("tags", () => {
  const tagPip = (tags: Record<string, string>) =>
    tb.strict.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static", tags },
      FAST,
    );

  test.for(["portico.io/cluster", "a<b", "a>b", "100%", "a&b", "a\\b", "why?", "tab\there"])(
    "a tag name with %j is 400 InvalidTagNameCharacters, on create and on a tags PATCH",
    async (name) => {
      expect(await rejection(tagPip({ [name]: "x", fine: "y" }))).toMatchObject({
        status: 400,
        code: "InvalidTagNameCharacters",
        message: `The tag names '${name}' have reserved characters '<,>,%,&,\\,?,/' or control characters.`,
      });
      await tagPip({ fine: "y" });
      expect(
        await rejection(tb.strict.publicIPAddresses.updateTags(RG, "pip", { tags: { [name]: "x" } })),
      ).toMatchObject({ status: 400, code: "InvalidTagNameCharacters" });
      expect((await tb.network.publicIPAddresses.get(RG, "pip")).tags).toEqual({ fine: "y" });
    },
  );

  test("the same names are refused on a resource group, whose tags ARM checks too", async () => {
    const res = await tb.arm("PUT", `${subscriptionPath(tb)}/resourcegroups/tagged?api-version=2024-11-01`, {
      location: LOCATION,
      tags: { "kubernetes.io/cluster": "owned" },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "InvalidTagNameCharacters" } });
  });

  test("50 tags are accepted; 51 are 400 InvalidTags", async () => {
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, "v"]));
    expect(Object.keys((await tagPip(tags(50))).tags!)).toHaveLength(50);
    expect(await rejection(tagPip(tags(51)))).toMatchObject({
      status: 400,
      code: "InvalidTags",
      message: "Too many tags specified. Requested tag count - '51'. Maximum number of tags allowed - '50'.",
    });
  });

  test("a name of 512 characters is accepted, 513 is 400 InvalidTagName; an empty name is refused too", async () => {
    await tagPip({ ["n".repeat(512)]: "v" });
    expect(await rejection(tagPip({ ["n".repeat(513)]: "v" }))).toMatchObject({
      status: 400,
      code: "InvalidTagName",
    });
    expect(await rejection(tagPip({ " ": "v" }))).toMatchObject({ status: 400, code: "InvalidTagName" });
  });

  test("a value of 256 characters is accepted, 257 is 400 InvalidTagValueLength", async () => {
    await tagPip({ long: "v".repeat(256) });
    const refused = await rejection(tagPip({ long: "v".repeat(257) }));
    expect(refused).toMatchObject({ status: 400, code: "InvalidTagValueLength" });
    expect(refused.message).toContain("Maximum allowed length for tag value - '256' characters.");
  });
});

describe("load balancers", () => {
  const lbId = (name: string): string => networkId(tb, RG, "loadBalancers", name);

  /**
   * An internal Standard load balancer: `frontends` private frontends, one pool per entry of `pools` (its
   * addresses in the node subnet), and a TCP rule to the first pool from each frontend `rules` lists, each on its
   * own port.
   */
  const internalLb = (
    name: string,
    { frontends = 1, pools = [] as string[][], rules = [] as number[] },
  ): LoadBalancer => ({
    location: LOCATION,
    sku: { name: "Standard" },
    frontendIPConfigurations: Array.from({ length: frontends }, (_, i) => ({
      name: `fe${i}`,
      subnet: { id: subnetId },
    })),
    backendAddressPools: pools.map((addresses, i) => ({
      name: `pool${i}`,
      loadBalancerBackendAddresses: addresses.map((ip) => ({
        name: ip,
        ipAddress: ip,
        virtualNetwork: { id: vnetId },
      })),
    })),
    loadBalancingRules: rules.map((fe, i) => ({
      name: `rule${i}`,
      protocol: "Tcp",
      frontendPort: 1000 + i,
      backendPort: 1000 + i,
      frontendIPConfiguration: { id: `${lbId(name)}/frontendIPConfigurations/fe${fe}` },
      backendAddressPool: { id: `${lbId(name)}/backendAddressPools/pool0` },
    })),
  });
  const put = (name: string, lb: LoadBalancer) => tb.strict.loadBalancers.createOrUpdate(RG, name, lb, FAST);

  test("more frontends than allowed are 400 LoadBalancerFrontendIPConfigurationCountLimitReached; what was there stays", async () => {
    limit({ frontendIPConfigurationsPerLoadBalancer: 3 });
    await put("lb", internalLb("lb", { frontends: 3 }));
    expect(await rejection(put("lb", internalLb("lb", { frontends: 4 })))).toEqual({
      status: 400,
      code: "LoadBalancerFrontendIPConfigurationCountLimitReached",
      message: `Standard sku load balancer ${lbId("lb")} cannot have more than 3 FrontendIPConfigurations.`,
    });
    expect((await tb.network.loadBalancers.get(RG, "lb")).frontendIPConfigurations).toHaveLength(3);
  });

  test("a Basic load balancer is held to Basic's documented 200 frontends", async () => {
    const basic = { ...internalLb("lb", { frontends: 201 }), sku: { name: "Basic" } };
    expect(await rejection(put("lb", basic))).toMatchObject({
      status: 400,
      code: "LoadBalancerFrontendIPConfigurationCountLimitReached",
      message: `Basic sku load balancer ${lbId("lb")} cannot have more than 200 FrontendIPConfigurations.`,
    });
    await put("lb", { ...basic, frontendIPConfigurations: basic.frontendIPConfigurations!.slice(0, 200) });
  });

  test("more rules than allowed are 400 LoadBalancerRuleCountLimitReached", async () => {
    limit({ rulesPerLoadBalancer: 2 });
    const pools = [["10.0.1.10"]];
    await put("lb", internalLb("lb", { pools, rules: [0, 0] }));
    expect(await rejection(put("lb", internalLb("lb", { pools, rules: [0, 0, 0] })))).toMatchObject({
      status: 400,
      code: "LoadBalancerRuleCountLimitReached",
    });
  });

  test("a pool with more addresses than allowed is 400, whether written with the load balancer or on its own", async () => {
    limit({ addressesPerBackendPool: 2 });
    await put("lb", internalLb("lb", { pools: [["10.0.1.10", "10.0.1.11"]] }));
    const three = ["10.0.1.10", "10.0.1.11", "10.0.1.12"];
    expect(await rejection(put("lb", internalLb("lb", { pools: [three] })))).toMatchObject({
      status: 400,
      code: "LoadBalancerBackendAddressPoolSizeLimitReached",
    });
    const pool = internalLb("lb", { pools: [three] }).backendAddressPools![0]!;
    expect(
      await rejection(
        tb.strict.loadBalancerBackendAddressPools.createOrUpdate(RG, "lb", "pool0", pool, FAST),
      ),
    ).toMatchObject({ status: 400, code: "LoadBalancerBackendAddressPoolSizeLimitReached" });
  });

  test("a frontend whose rules reach more backend addresses than allowed is 400 LoadBalancerBackendsPerFrontendCountLimitReached", async () => {
    limit({ backendAddressesPerFrontend: 3 });
    const pools = [["10.0.1.10", "10.0.1.11"]];
    // Two rules, each reaching both addresses: 4 on one frontend, 2 on each of two.
    await put("lb", internalLb("lb", { frontends: 2, pools, rules: [0, 1] }));
    const refused = await rejection(put("lb", internalLb("lb", { frontends: 2, pools, rules: [0, 0] })));
    expect(refused).toMatchObject({ status: 400, code: "LoadBalancerBackendsPerFrontendCountLimitReached" });
    expect(refused.message).toContain(`${lbId("lb")}/frontendIPConfigurations/fe0 would reach 4`);
  });

  test("rules reaching more backend addresses than allowed over the whole load balancer are 400", async () => {
    limit({ backendAddressesPerLoadBalancer: 3 });
    const pools = [["10.0.1.10", "10.0.1.11"]];
    await put("lb", internalLb("lb", { frontends: 2, pools, rules: [0] }));
    expect(
      await rejection(put("lb", internalLb("lb", { frontends: 2, pools, rules: [0, 1] }))),
    ).toMatchObject({ status: 400, code: "LoadBalancerBackendsCountLimitReached" });
  });

  test("a backend address reached by more rules than allowed, over every load balancer, is 400; other addresses are not held back", async () => {
    limit({ rulesPerBackendAddress: 2 });
    await put("a", internalLb("a", { pools: [["10.0.1.10"]], rules: [0, 0] }));
    const refused = await rejection(put("b", internalLb("b", { pools: [["10.0.1.10"]], rules: [0] })));
    expect(refused).toEqual({
      status: 400,
      code: "BackendAddressRuleCountLimitReached",
      message:
        `Backend address 10.0.1.10 of virtual network ${vnetId} cannot have more than 2 load balancing, ` +
        `inbound NAT and outbound rules combined; load balancer ${lbId("b")} would give it 3.`,
    });
    await put("b", internalLb("b", { pools: [["10.0.1.11"]], rules: [0] }));
  });

  test("outbound rules count towards a backend address's rules", async () => {
    limit({ rulesPerBackendAddress: 2 });
    const lb = internalLb("lb", { pools: [["10.0.1.10"]], rules: [0, 0] });
    await put("lb", lb);
    const outbound = {
      name: "out",
      protocol: "All" as const,
      frontendIPConfigurations: [{ id: `${lbId("lb")}/frontendIPConfigurations/fe0` }],
      backendAddressPool: { id: `${lbId("lb")}/backendAddressPools/pool0` },
    };
    expect(await rejection(put("lb", { ...lb, outboundRules: [outbound] }))).toMatchObject({
      status: 400,
      code: "BackendAddressRuleCountLimitReached",
    });
  });
});

describe("network security groups", () => {
  const rule = (name: string, priority: number, extra: Partial<SecurityRule> = {}): SecurityRule => ({
    name,
    protocol: "Tcp",
    access: "Allow",
    direction: "Inbound",
    priority,
    sourceAddressPrefix: "Internet",
    sourcePortRange: "*",
    destinationAddressPrefix: "*",
    destinationPortRange: "80",
    ...extra,
  });
  const putNsg = (securityRules: SecurityRule[]) =>
    tb.strict.networkSecurityGroups.createOrUpdate(RG, "nsg", { location: LOCATION, securityRules }, FAST);

  test("more rules than allowed are 400 SecurityRuleCountLimitReached, as a whole group or one rule at a time", async () => {
    limit({ securityRulesPerGroup: 2 });
    await putNsg([rule("a", 100), rule("b", 110)]);
    expect(await rejection(putNsg([rule("a", 100), rule("b", 110), rule("c", 120)]))).toEqual({
      status: 400,
      code: "SecurityRuleCountLimitReached",
      message: "A security group cannot have more than 2 security rules.",
    });
    expect(
      await rejection(tb.strict.securityRules.createOrUpdate(RG, "nsg", "c", rule("c", 120), FAST)),
    ).toMatchObject({ status: 400, code: "SecurityRuleCountLimitReached" });
  });

  test("more destination addresses than allowed over all rules are 400 SecurityRuleAddressesOrPortsPerSecurityGroupLimitReached", async () => {
    limit({ addressPrefixesPerSecurityGroup: 3 });
    const to = (...addresses: string[]) => ({
      destinationAddressPrefix: undefined,
      destinationAddressPrefixes: addresses,
    });
    // Service tags and `*` are not addresses: "Internet" on every source does not count.
    await putNsg([rule("a", 100, to("10.0.1.10", "10.0.1.11")), rule("b", 110, to("10.0.2.0/24"))]);
    const nsgId = networkId(tb, RG, "networkSecurityGroups", "nsg");
    expect(
      await rejection(
        putNsg([
          rule("a", 100, to("10.0.1.10", "10.0.1.11")),
          rule("b", 110, to("10.0.2.0/24", "10.0.1.12")),
        ]),
      ),
    ).toEqual({
      status: 400,
      code: "SecurityRuleAddressesOrPortsPerSecurityGroupLimitReached",
      message:
        `Network security group ${nsgId} has 4 DestinationAddressPrefixes. A security group cannot have more ` +
        "than 3 DestinationAddressPrefixes as per the limit MaxSecurityRuleAddressesOrPortsPerSecurityGroup.",
    });
  });

  test("sources are counted on their own", async () => {
    limit({ addressPrefixesPerSecurityGroup: 3 });
    const from = (...addresses: string[]) => ({
      sourceAddressPrefix: undefined,
      sourceAddressPrefixes: addresses,
    });
    await putNsg([rule("a", 100, from("203.0.113.0/24", "198.51.100.7", "192.0.2.1"))]);
    const refused = await rejection(
      putNsg([
        rule("a", 100, from("203.0.113.0/24", "198.51.100.7")),
        rule("b", 110, from("192.0.2.1", "192.0.2.2")),
      ]),
    );
    expect(refused).toMatchObject({
      status: 400,
      code: "SecurityRuleAddressesOrPortsPerSecurityGroupLimitReached",
    });
    expect(refused.message).toContain("has 4 SourceAddressPrefixes");
  });
});

describe("public IP addresses", () => {
  test("the subscription's quota per region is 400 PublicIPCountLimitReached; another region and updates are not held back", async () => {
    limit({ publicIpAddressesPerRegion: 2 });
    await createPublicIp(tb, RG, "a");
    await createPublicIp(tb, RG, "b");
    expect(await rejection(createPublicIp(tb, RG, "c"))).toEqual({
      status: 400,
      code: "PublicIPCountLimitReached",
      message: "Cannot create more than 2 public IP addresses for this subscription in this region.",
    });
    await tb.strict.publicIPAddresses.createOrUpdate(
      RG,
      "a",
      {
        location: LOCATION,
        sku: { name: "Standard" },
        publicIPAllocationMethod: "Static",
        idleTimeoutInMinutes: 10,
      },
      FAST,
    );
    await tb.strict.publicIPAddresses.createOrUpdate(
      RG,
      "west",
      { location: "westus", sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
      FAST,
    );
    await tb.network.publicIPAddresses.delete(RG, "b", FAST);
    await createPublicIp(tb, RG, "c");
  });
});

describe("setting the limits", () => {
  const admin = async (method: string, body?: unknown) => {
    const res = await fetch(`${tb.azure.url}/_emulator/config`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    return { status: res.status, body: (await res.json()) as { limits: Limits } };
  };

  test("they default to Azure's documented values", async () => {
    expect((await admin("GET")).body.limits).toEqual({
      frontendIPConfigurationsPerLoadBalancer: 600,
      rulesPerLoadBalancer: 1500,
      rulesPerBackendAddress: 300,
      addressesPerBackendPool: 5000,
      backendAddressesPerFrontend: 10_000,
      backendAddressesPerLoadBalancer: 500_000,
      securityRulesPerGroup: 1000,
      addressPrefixesPerSecurityGroup: 4000,
      publicIpAddressesPerRegion: 1000,
    });
  });

  test("the control API changes only the limits it names, refuses unknown ones, and reset restores them", async () => {
    const changed = await admin("POST", { limits: { securityRulesPerGroup: 5 } });
    expect(changed.body.limits).toEqual({ ...DOCUMENTED_LIMITS, securityRulesPerGroup: 5 });
    expect((await admin("POST", { limits: { frontends: 5 } })).status).toBe(400);
    expect((await admin("POST", { limits: { securityRulesPerGroup: -1 } })).status).toBe(400);
    tb.azure.reset();
    expect((await admin("GET")).body.limits).toEqual(DOCUMENTED_LIMITS);
  });

  test("0 turns a check off", async () => {
    limit({ publicIpAddressesPerRegion: 0 });
    for (const name of ["a", "b", "c"]) await createPublicIp(tb, RG, name);
    limit({ publicIpAddressesPerRegion: 3 });
    expect(await rejection(createPublicIp(tb, RG, "d"))).toMatchObject({ code: "PublicIPCountLimitReached" });
  });

  test(`${LIMITS_ENV} sets them for an emulator that starts, under what its options say`, async () => {
    const saved = process.env[LIMITS_ENV];
    process.env[LIMITS_ENV] = "securityRulesPerGroup=7, publicIpAddressesPerRegion=9";
    try {
      const azure = await startAzureEmulator({ limits: { publicIpAddressesPerRegion: 11 } });
      expect(azure.server.config.limits).toEqual({
        ...DOCUMENTED_LIMITS,
        securityRulesPerGroup: 7,
        publicIpAddressesPerRegion: 11,
      });
      await azure.stop();
      process.env[LIMITS_ENV] = "securityRules=7";
      await expect(startAzureEmulator()).rejects.toThrow(/"securityRules" is not a limit/);
    } finally {
      if (saved === undefined) delete process.env[LIMITS_ENV];
      else process.env[LIMITS_ENV] = saved;
    }
  });
});
