// IPv6 and dual-stack load balancers through the real @azure/arm-network client: IPv6 public IPs and prefixes,
// IPv6 frontends (public, and private from a subnet's IPv6 range), and the IP-version refusals.
import type { LoadBalancer } from "@azure/arm-network";
import { Address6 } from "ip-address";
import { describe, expect, test } from "vitest";
import { createResourceGroup, FAST, LOCATION, networkId, rejection, useTestbed } from "./testbed.ts";

const RG = "v6-tests";
let vnetId: string;
let subnetId: string;

const tb = useTestbed({}, async (tb) => {
  await createResourceGroup(tb, RG);
  const vnet = await tb.network.virtualNetworks.createOrUpdate(
    RG,
    "vnet",
    {
      location: LOCATION,
      addressSpace: { addressPrefixes: ["10.0.0.0/16", "fd00:10::/48"] },
      subnets: [{ name: "nodes", addressPrefixes: ["10.0.1.0/24", "fd00:10:0:1::/64"] }],
    },
    FAST,
  );
  vnetId = vnet.id!;
  subnetId = vnet.subnets![0]!.id!;
});

const lbId = (name = "lb"): string => networkId(tb, RG, "loadBalancers", name);
const put = (lb: LoadBalancer, name = "lb"): Promise<LoadBalancer> =>
  tb.strict.loadBalancers.createOrUpdate(RG, name, lb, FAST);

async function publicIp(name: string, version: "IPv4" | "IPv6", prefixId?: string) {
  return tb.network.publicIPAddresses.createOrUpdate(
    RG,
    name,
    {
      location: LOCATION,
      sku: { name: "Standard" },
      publicIPAllocationMethod: "Static",
      publicIPAddressVersion: version,
      ...(prefixId ? { publicIPPrefix: { id: prefixId } } : {}),
    },
    FAST,
  );
}

/** A load balancer with one frontend and one rule to a pool of `addresses`. */
function oneRule(
  frontend: NonNullable<LoadBalancer["frontendIPConfigurations"]>[number],
  addresses: string[],
  name = "lb",
) {
  return {
    location: LOCATION,
    sku: { name: "Standard" },
    frontendIPConfigurations: [{ ...frontend, name: "fe" }],
    backendAddressPools: [
      {
        name: "pool",
        loadBalancerBackendAddresses: addresses.map((ip, i) => ({
          name: `b${i}`,
          ipAddress: ip,
          virtualNetwork: { id: vnetId },
        })),
      },
    ],
    loadBalancingRules: [
      {
        name: "tcp-80",
        protocol: "Tcp",
        frontendPort: 80,
        backendPort: 80,
        frontendIPConfiguration: { id: `${lbId(name)}/frontendIPConfigurations/fe` },
        backendAddressPool: { id: `${lbId(name)}/backendAddressPools/pool` },
      },
    ],
  } satisfies LoadBalancer;
}

describe("IPv6 in the emulator", () => {
  test("an IPv6 Standard static public IP gets an address from 2001:db8::/32; one from an IPv6 /124 prefix, from it", async () => {
    const pip = await publicIp("v6", "IPv6");
    expect(pip).toMatchObject({ publicIPAddressVersion: "IPv6", publicIPAllocationMethod: "Static" });
    expect(pip.ipAddress).toMatch(/^2001:db8:/);
    const prefix = await tb.network.publicIPPrefixes.createOrUpdate(
      RG,
      "p6",
      { location: LOCATION, sku: { name: "Standard" }, prefixLength: 124, publicIPAddressVersion: "IPv6" },
      FAST,
    );
    expect(prefix.ipPrefix).toMatch(/^2001:db8:[0-9a-f:]+\/124$/);
    const fromPrefix = await publicIp("v6-from-prefix", "IPv6", prefix.id);
    expect(new Address6(fromPrefix.ipAddress!).isInSubnet(new Address6(prefix.ipPrefix!))).toBe(true);
    // An IPv4 public IP cannot come from an IPv6 prefix.
    const wrong = await rejection(publicIp("v4-from-v6", "IPv4", prefix.id));
    expect(wrong).toMatchObject({ status: 400, code: "PublicIPPrefixMismatch" });
  });

  test("a dual-stack load balancer: an IPv4 and an IPv6 public frontend, each with a pool and rule of its family", async () => {
    const v4 = await publicIp("pip4", "IPv4");
    const v6 = await publicIp("pip6", "IPv6");
    const lb = await put({
      location: LOCATION,
      sku: { name: "Standard" },
      frontendIPConfigurations: [
        { name: "fe4", publicIPAddress: { id: v4.id! } },
        { name: "fe6", publicIPAddress: { id: v6.id! } },
        { name: "int6", subnet: { id: subnetId }, privateIPAddressVersion: "IPv6" },
      ],
      backendAddressPools: [
        {
          name: "p4",
          loadBalancerBackendAddresses: [
            { name: "n", ipAddress: "10.0.1.10", virtualNetwork: { id: vnetId } },
          ],
        },
        {
          name: "p6",
          loadBalancerBackendAddresses: [
            { name: "n", ipAddress: "fd00:10:0:1::10", virtualNetwork: { id: vnetId } },
          ],
        },
      ],
      loadBalancingRules: (["4", "6"] as const).map((v) => ({
        name: `r${v}`,
        protocol: "Tcp",
        frontendPort: 80,
        backendPort: 80,
        frontendIPConfiguration: { id: `${lbId()}/frontendIPConfigurations/fe${v}` },
        backendAddressPool: { id: `${lbId()}/backendAddressPools/p${v}` },
      })),
    });
    expect(lb.provisioningState).toBe("Succeeded");
    const int6 = lb.frontendIPConfigurations!.find((f) => f.name === "int6")!;
    // The first usable address of the subnet's IPv6 range (Azure keeps the first four of a subnet).
    expect(int6).toMatchObject({ privateIPAddressVersion: "IPv6", privateIPAllocationMethod: "Dynamic" });
    expect(int6.privateIPAddress).toMatch(/^fd00:10:0:1::[0-9a-f]+$/);
  });

  test("a static private IPv6 frontend address must be in the subnet's IPv6 range", async () => {
    const inside = await put(
      oneRule(
        {
          subnet: { id: subnetId },
          privateIPAddressVersion: "IPv6",
          privateIPAllocationMethod: "Static",
          privateIPAddress: "fd00:10:0:1::99",
        },
        ["fd00:10:0:1::10"],
      ),
    );
    expect(inside.frontendIPConfigurations![0]!.privateIPAddress).toBe("fd00:10:0:1::99");
    const outside = await rejection(
      put(
        oneRule(
          {
            subnet: { id: subnetId },
            privateIPAddressVersion: "IPv6",
            privateIPAllocationMethod: "Static",
            privateIPAddress: "fd00:99::1",
          },
          ["fd00:10:0:1::10"],
          "lb-out",
        ),
        "lb-out",
      ),
    );
    expect(outside).toMatchObject({ status: 400, code: "PrivateIPAddressNotInSubnet" });
  });

  test("refuses a rule whose frontend and pool differ in IP version (the emulator's own code)", async () => {
    const v6 = await publicIp("pip6-mismatch", "IPv6");
    const err = await rejection(put(oneRule({ publicIPAddress: { id: v6.id! } }, ["10.0.1.10"])));
    expect(err).toMatchObject({ status: 400, code: "LoadBalancingRuleFrontendAndBackendIpVersionMismatch" });
    const private4 = await rejection(
      put(
        oneRule({ subnet: { id: subnetId }, privateIPAddressVersion: "IPv4" }, ["fd00:10:0:1::10"], "lb-2"),
        "lb-2",
      ),
    );
    expect(private4.code).toBe("LoadBalancingRuleFrontendAndBackendIpVersionMismatch");
  });

  test("refuses a pool mixing IPv4 and IPv6 addresses, and an IPv6 frontend on a Basic load balancer", async () => {
    const mixed = await rejection(
      put(oneRule({ subnet: { id: subnetId } }, ["10.0.1.10", "fd00:10:0:1::10"], "lb-mixed"), "lb-mixed"),
    );
    expect(mixed).toMatchObject({ status: 400, code: "BackendAddressPoolMixesIpVersions" });
    const basic = await rejection(
      put(
        {
          ...oneRule({ subnet: { id: subnetId }, privateIPAddressVersion: "IPv6" }, [], "lb-basic"),
          sku: { name: "Basic" },
        },
        "lb-basic",
      ),
    );
    expect(basic).toMatchObject({ status: 400, code: "IPv6FrontendRequiresStandardSkuLoadBalancer" });
  });
});
