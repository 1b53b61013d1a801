// Public IPs, virtual networks, subnets, network security groups and resource groups: what Azure refuses while
// other resources depend on them, and the back-references it shows.
import { describe, expect, test } from "vitest";
import {
  FAST,
  LOCATION,
  createPublicIp,
  createResourceGroup,
  networkId,
  rejection,
  seedNetwork,
  standardLoadBalancer,
  subscriptionPath,
  useTestbed,
} from "./testbed.ts";

let vnetId: string;
let subnetId: string;
const RG = "net-tests";

const tb = useTestbed({}, async (tb) => {
  ({ vnetId, subnetId } = await seedNetwork(tb, RG));
});

describe("public IP addresses", () => {
  test("in use by a frontend cannot be deleted: 400 PublicIPAddressCannotBeDeleted, until the load balancer goes", async () => {
    const pipId = await createPublicIp(tb, RG, "pip");
    const lb = await tb.network.loadBalancers.createOrUpdate(
      RG,
      "lb",
      standardLoadBalancer(tb, RG, "lb", pipId, vnetId),
      FAST,
    );
    const err = await rejection(tb.strict.publicIPAddresses.delete(RG, "pip", FAST));
    expect(err).toMatchObject({ status: 400, code: "PublicIPAddressCannotBeDeleted" });
    expect(err.message).toContain(
      `can not be deleted since it is still allocated to resource ${lb.id}/frontendIPConfigurations/fe`,
    );
    await tb.network.loadBalancers.delete(RG, "lb", FAST);
    const pip = await tb.network.publicIPAddresses.get(RG, "pip");
    expect(pip.ipConfiguration).toBeUndefined();
    await tb.network.publicIPAddresses.delete(RG, "pip", FAST);
    expect(await rejection(tb.strict.publicIPAddresses.get(RG, "pip"))).toMatchObject({
      status: 404,
      code: "ResourceNotFound",
    });
  });

  test("in use cannot change SKU or allocation, but can change tags", async () => {
    const pipId = await createPublicIp(tb, RG, "pip");
    await tb.network.loadBalancers.createOrUpdate(
      RG,
      "lb",
      standardLoadBalancer(tb, RG, "lb", pipId, vnetId),
      FAST,
    );
    const downgrade = tb.strict.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      { location: LOCATION, sku: { name: "Basic" }, publicIPAllocationMethod: "Dynamic" },
      FAST,
    );
    expect(await rejection(downgrade)).toMatchObject({
      status: 400,
      code: "PublicIPAddressInUseCannotUpdate",
    });
    const before = await tb.network.publicIPAddresses.get(RG, "pip");
    const tagged = await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      {
        location: LOCATION,
        sku: { name: "Standard" },
        publicIPAllocationMethod: "Static",
        tags: { "portico.io-owned": "true" },
      },
      FAST,
    );
    expect(tagged.tags).toEqual({ "portico.io-owned": "true" });
    expect(tagged.ipAddress).toBe(before.ipAddress);
  });

  test("a Dynamic Basic address exists only while a provisioned frontend uses it", async () => {
    const pipId = await createPublicIp(tb, RG, "basic", "Basic");
    expect((await tb.network.publicIPAddresses.get(RG, "basic")).ipAddress).toBeUndefined();
    await tb.network.loadBalancers.createOrUpdate(
      RG,
      "lb",
      {
        location: LOCATION,
        sku: { name: "Basic" },
        frontendIPConfigurations: [{ name: "fe", publicIPAddress: { id: pipId } }],
      },
      FAST,
    );
    const assigned = (await tb.network.publicIPAddresses.get(RG, "basic")).ipAddress;
    expect(assigned).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // An update of the load balancer, even a slow one, keeps the address.
    tb.azure.configure({ operationDurationMs: 100, retryAfterSeconds: 0 });
    await tb.network.loadBalancers.updateTags(RG, "lb", { tags: { touched: "1" } });
    const lb = await tb.network.loadBalancers.get(RG, "lb");
    await tb.network.loadBalancers.createOrUpdate(RG, "lb", { ...lb, tags: { touched: "2" } }, FAST);
    expect((await tb.network.publicIPAddresses.get(RG, "basic")).ipAddress).toBe(assigned);
    await tb.network.loadBalancers.delete(RG, "lb", FAST);
    expect((await tb.network.publicIPAddresses.get(RG, "basic")).ipAddress).toBeUndefined();
  });

  test("long lists come in pages that the SDK follows through nextLink", async () => {
    tb.azure.configure({ listPageSize: 2 });
    for (const name of ["a", "b", "c", "d", "e"]) await createPublicIp(tb, RG, name);
    tb.azure.clearRequests();
    const names: string[] = [];
    for await (const pip of tb.network.publicIPAddresses.list(RG)) names.push(pip.name!);
    expect(names).toEqual(["a", "b", "c", "d", "e"]);
    expect(tb.azure.requestCounts()).toEqual({ "GET publicIPAddresses (list)": 3 });
  });

  test("an idle timeout outside 4-30 minutes is refused", async () => {
    const err = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(
        RG,
        "pip",
        {
          location: LOCATION,
          sku: { name: "Standard" },
          publicIPAllocationMethod: "Static",
          idleTimeoutInMinutes: 31,
        },
        FAST,
      ),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain("has invalid Idle Timeout. The value must be between 4 and 30.");
  });
});

describe("virtual networks and subnets", () => {
  test("a subnet outside the address space is NetcfgSubnetRangeOutsideVnet; overlapping ones NetcfgSubnetRangesOverlap", async () => {
    const outside = tb.strict.virtualNetworks.createOrUpdate(
      RG,
      "v2",
      {
        location: LOCATION,
        addressSpace: { addressPrefixes: ["10.1.0.0/16"] },
        subnets: [{ name: "s", addressPrefix: "10.2.0.0/24" }],
      },
      FAST,
    );
    expect(await rejection(outside)).toMatchObject({ status: 400, code: "NetcfgSubnetRangeOutsideVnet" });
    const overlapping = tb.strict.virtualNetworks.createOrUpdate(
      RG,
      "v2",
      {
        location: LOCATION,
        addressSpace: { addressPrefixes: ["10.1.0.0/16"] },
        subnets: [
          { name: "a", addressPrefix: "10.1.0.0/24" },
          { name: "b", addressPrefix: "10.1.0.128/25" },
        ],
      },
      FAST,
    );
    expect(await rejection(overlapping)).toMatchObject({ status: 400, code: "NetcfgSubnetRangesOverlap" });
  });

  test("a subnet with a frontend in it cannot be deleted, nor can its virtual network", async () => {
    const lb = await tb.network.loadBalancers.createOrUpdate(
      RG,
      "ilb",
      {
        location: LOCATION,
        sku: { name: "Standard" },
        frontendIPConfigurations: [{ name: "fe", subnet: { id: subnetId } }],
      },
      FAST,
    );
    const err = await rejection(tb.strict.subnets.delete(RG, "vnet", "nodes", FAST));
    expect(err).toMatchObject({ status: 400, code: "InUseSubnetCannotBeDeleted" });
    expect(err.message).toContain(`is in use by ${lb.id}/frontendIPConfigurations/fe`);
    expect(await rejection(tb.strict.virtualNetworks.delete(RG, "vnet", FAST))).toMatchObject({
      status: 400,
      code: "InUseSubnetCannotBeDeleted",
    });
    const dropped = tb.strict.virtualNetworks.createOrUpdate(
      RG,
      "vnet",
      { location: LOCATION, addressSpace: { addressPrefixes: ["10.0.0.0/16"] }, subnets: [] },
      FAST,
    );
    expect(await rejection(dropped)).toMatchObject({ status: 400, code: "InUseSubnetCannotBeDeleted" });
  });

  test("subnets can be added, read and deleted on their own", async () => {
    const added = await tb.network.subnets.createOrUpdate(
      RG,
      "vnet",
      "pods",
      { addressPrefix: "10.0.8.0/22" },
      FAST,
    );
    expect(added.id).toBe(`${vnetId}/subnets/pods`);
    expect((await tb.network.virtualNetworks.get(RG, "vnet")).subnets!.map((s) => s.name)).toEqual([
      "nodes",
      "pods",
    ]);
    await tb.network.subnets.delete(RG, "vnet", "pods", FAST);
    expect(await rejection(tb.strict.subnets.get(RG, "vnet", "pods"))).toMatchObject({
      status: 404,
      code: "NotFound",
    });
  });
});

describe("network security groups", () => {
  const rule = (priority: number, port: string) => ({
    protocol: "Tcp",
    access: "Allow",
    direction: "Inbound",
    priority,
    sourceAddressPrefix: "Internet",
    sourcePortRange: "*",
    destinationAddressPrefix: "*",
    destinationPortRange: port,
  });

  test("carry their rules and Azure's default rules", async () => {
    const nsg = await tb.network.networkSecurityGroups.createOrUpdate(
      RG,
      "nsg",
      { location: LOCATION, securityRules: [{ name: "http", ...rule(100, "80") }] },
      FAST,
    );
    expect(nsg.securityRules!.map((r) => [r.name, r.priority])).toEqual([["http", 100]]);
    expect(nsg.defaultSecurityRules!.map((r) => r.name)).toContain("DenyAllInBound");
    const added = await tb.network.securityRules.createOrUpdate(RG, "nsg", "https", rule(110, "443"), FAST);
    expect(added.id).toBe(`${nsg.id}/securityRules/https`);
  });

  test("refuse a priority outside 100-4096 and two rules with one priority and direction", async () => {
    const low = tb.strict.networkSecurityGroups.createOrUpdate(
      RG,
      "nsg",
      { location: LOCATION, securityRules: [{ name: "r", ...rule(99, "80") }] },
      FAST,
    );
    expect(await rejection(low)).toMatchObject({ status: 400, code: "SecurityRuleInvalidPriority" });
    const twins = tb.strict.networkSecurityGroups.createOrUpdate(
      RG,
      "nsg",
      {
        location: LOCATION,
        securityRules: [
          { name: "a", ...rule(200, "80") },
          { name: "b", ...rule(200, "443") },
        ],
      },
      FAST,
    );
    expect(await rejection(twins)).toMatchObject({ status: 400, code: "SecurityRuleConflict" });
  });

  test("in use by a subnet cannot be deleted, and shows the subnet", async () => {
    const nsg = await tb.network.networkSecurityGroups.createOrUpdate(
      RG,
      "nsg",
      { location: LOCATION },
      FAST,
    );
    await tb.network.subnets.createOrUpdate(
      RG,
      "vnet",
      "nodes",
      { addressPrefix: "10.0.1.0/24", networkSecurityGroup: { id: nsg.id! } },
      FAST,
    );
    expect((await tb.network.networkSecurityGroups.get(RG, "nsg")).subnets!.map((s) => s.id)).toEqual([
      subnetId,
    ]);
    const err = await rejection(tb.strict.networkSecurityGroups.delete(RG, "nsg", FAST));
    expect(err).toMatchObject({ status: 400, code: "InUseNetworkSecurityGroupCannotBeDeleted" });
    expect(err.message).toContain(subnetId);
  });

  test("a subnet referencing a missing security group is InvalidResourceReference", async () => {
    const ghost = networkId(tb, RG, "networkSecurityGroups", "ghost");
    const err = await rejection(
      tb.strict.subnets.createOrUpdate(
        RG,
        "vnet",
        "nodes",
        { addressPrefix: "10.0.1.0/24", networkSecurityGroup: { id: ghost } },
        FAST,
      ),
    );
    expect(err).toMatchObject({ status: 400, code: "InvalidResourceReference" });
  });
});

describe("resource groups", () => {
  const rgPath = (name: string): string =>
    `${subscriptionPath(tb)}/resourcegroups/${name}?api-version=2024-11-01`;

  test("are created, read and deleted as a long-running operation that removes what they hold", async () => {
    await createResourceGroup(tb, "doomed");
    expect((await tb.arm("GET", rgPath("doomed"))).body).toMatchObject({
      name: "doomed",
      location: LOCATION,
      properties: { provisioningState: "Succeeded" },
    });
    await createPublicIp(tb, "doomed", "pip");
    tb.azure.configure({ operationDurationMs: 200 });
    const deleting = await tb.arm("DELETE", rgPath("doomed"));
    expect(deleting.status).toBe(202);
    const location = deleting.headers.get("location")!;
    expect(location).toContain(`${subscriptionPath(tb)}/operationresults/`);
    expect((await tb.arm("GET", location)).status).toBe(202);
    const inDeletingGroup = tb.strict.publicIPAddresses.createOrUpdate(
      "doomed",
      "late",
      { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
      FAST,
    );
    expect(await rejection(inDeletingGroup)).toMatchObject({
      status: 409,
      code: "ResourceGroupBeingDeleted",
    });
    await new Promise((r) => setTimeout(r, 250));
    expect((await tb.arm("GET", location)).status).toBe(200);
    expect((await tb.arm("GET", rgPath("doomed"))).body).toMatchObject({
      error: { code: "ResourceGroupNotFound" },
    });
    expect(await rejection(tb.strict.publicIPAddresses.get("doomed", "pip"))).toMatchObject({
      status: 404,
      code: "ResourceGroupNotFound",
    });
  });

  test("must exist before anything is created in them", async () => {
    const err = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(
        "nowhere",
        "pip",
        { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
        FAST,
      ),
    );
    expect(err).toMatchObject({ status: 404, code: "ResourceGroupNotFound" });
  });
});
