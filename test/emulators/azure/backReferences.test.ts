// The store's back-reference index, which ARM's read-only back-references and in-use checks are answered from:
// it follows each write (a frontend moved to another public IP, a subnet's security group changed, a load
// balancer deleted, the store emptied) and answers in the order the resources were first created.
import { describe, expect, test } from "vitest";
import type { LoadBalancer, NetworkResource, VirtualNetwork } from "./model.ts";
import { frontendsInSubnet, frontendsUsingPublicIp, subnetsUsingNsg } from "./references.ts";
import { Store } from "./store.ts";

const RG = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network";
const base = {
  subscriptionId: "s",
  resourceGroup: "rg",
  location: "westeurope",
  tags: {},
  etag: "",
  resourceGuid: "",
};

function lb(name: string, frontends: { name: string; pip?: string; subnet?: string }[]): LoadBalancer {
  return {
    ...base,
    id: `${RG}/loadBalancers/${name}`,
    type: "loadBalancers",
    name,
    provisioningState: "Succeeded",
    lastOperationName: "",
    properties: {
      frontendIPConfigurations: frontends.map((f) => ({
        name: f.name,
        ...(f.pip ? { publicIPAddressId: `${RG}/publicIPAddresses/${f.pip}` } : {}),
        ...(f.subnet ? { subnetId: f.subnet } : {}),
        privateIPAllocationMethod: "Dynamic",
        privateIPAddressVersion: "IPv4",
      })),
      backendAddressPools: [],
      loadBalancingRules: [],
      probes: [],
      outboundRules: [],
    },
  };
}

function vnet(nsgBySubnet: Record<string, string | undefined>): VirtualNetwork {
  return {
    ...base,
    id: `${RG}/virtualNetworks/vnet`,
    type: "virtualNetworks",
    name: "vnet",
    provisioningState: "Succeeded",
    lastOperationName: "",
    properties: {
      addressPrefixes: ["10.0.0.0/16"],
      subnets: Object.entries(nsgBySubnet).map(([name, nsg]) => ({
        name,
        addressPrefixes: [],
        singlePrefix: true,
        ...(nsg ? { networkSecurityGroupId: `${RG}/networkSecurityGroups/${nsg}` } : {}),
        privateEndpointNetworkPolicies: "Disabled",
        privateLinkServiceNetworkPolicies: "Enabled",
      })),
    },
  };
}

const pip = (name: string): string => `${RG}/publicIPAddresses/${name}`;
const users = (store: Store, name: string): string[] =>
  frontendsUsingPublicIp(store, pip(name)).map((u) => u.frontendId);

describe("back-references", () => {
  test("follow a frontend from one public IP to another, and go with its load balancer", () => {
    const store = new Store();
    store.put(lb("a", [{ name: "fe", pip: "one" }]));
    expect(users(store, "ONE")).toEqual([`${RG}/loadBalancers/a/frontendIPConfigurations/fe`]);
    store.put(lb("a", [{ name: "fe", pip: "two" }]));
    expect(users(store, "one")).toEqual([]);
    expect(users(store, "two")).toEqual([`${RG}/loadBalancers/a/frontendIPConfigurations/fe`]);
    // The answer carries the stored load balancer, whose provisioning state the platform changes in place.
    expect(frontendsUsingPublicIp(store, pip("two"))[0]!.lb).toBe(store.get(`${RG}/loadBalancers/a`));
    store.delete(`${RG}/loadBalancers/a`);
    expect(users(store, "two")).toEqual([]);
  });

  test("answer in the order the load balancers were first created, then of their frontends", () => {
    const store = new Store();
    const subnet = `${RG}/virtualNetworks/vnet/subnets/nodes`;
    store.put(
      lb("first", [
        { name: "x", subnet },
        { name: "y", subnet },
      ]),
    );
    store.put(lb("second", [{ name: "z", subnet }]));
    // Rewriting the first keeps its place, as a scan of the store would have it.
    store.put(
      lb("first", [
        { name: "y", subnet },
        { name: "x", subnet },
      ]),
    );
    expect(frontendsInSubnet(store, subnet).map((u) => u.frontend.name)).toEqual(["y", "x", "z"]);
  });

  test("follow a subnet's security group, and are emptied with the store", () => {
    const store = new Store();
    store.put(vnet({ a: "nsg", b: "nsg", c: undefined }));
    expect(subnetsUsingNsg(store, `${RG}/networkSecurityGroups/nsg`)).toEqual([
      `${RG}/virtualNetworks/vnet/subnets/a`,
      `${RG}/virtualNetworks/vnet/subnets/b`,
    ]);
    store.put(vnet({ a: undefined, b: "other" }));
    expect(subnetsUsingNsg(store, `${RG}/networkSecurityGroups/nsg`)).toEqual([]);
    expect(subnetsUsingNsg(store, `${RG}/networkSecurityGroups/other`)).toEqual([
      `${RG}/virtualNetworks/vnet/subnets/b`,
    ]);
    store.reset();
    expect(subnetsUsingNsg(store, `${RG}/networkSecurityGroups/other`)).toEqual([]);
    expect(store.ofType("virtualNetworks")).toEqual([] as NetworkResource[]);
  });
});
