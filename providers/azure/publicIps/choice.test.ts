import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import { resourceId } from "../arm/ids.ts";
import type { PublicIPAddress } from "../model.ts";
import { ownershipTags } from "../names.ts";
import { choosePublicIp } from "./choice.ts";
import { CLUSTER, config, FE, OTHER_UID, publicIp, RG, SUB, UID } from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const svc = { namespace: "shop", name: "web", uid: UID };
const ctx = { cluster: CLUSTER, config: config() };
const choose = (annotations: Record<string, string>, pips: PublicIPAddress[], loadBalancerIP?: string) =>
  choosePublicIp(parseAzureSettings(annotations, loadBalancerIP), svc, ctx, pips);
const ours = (name: string, extra: Partial<PublicIPAddress> = {}) =>
  publicIp(name, { tags: ownershipTags(CLUSTER, svc, "publicip"), ...extra });

function refusal(annotations: Record<string, string>, pips: PublicIPAddress[]): ConfigurationError {
  try {
    choose(annotations, pips);
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("choosePublicIp", () => {
  it("has none for an internal Service", () => {
    expect(choose({ [`${A}azure-load-balancer-internal`]: "true" }, [])).toBeUndefined();
  });

  it("makes one named after the cluster and the Service, tagged with the Service and the annotated tags", () => {
    expect(choose({ [`${A}azure-pip-tags`]: "team=web" }, [])).toEqual({
      kind: "managed",
      name: `${CLUSTER}-${FE}`,
      resourceGroup: RG,
      id: resourceId(SUB, RG, "publicIPAddresses", `${CLUSTER}-${FE}`),
      tags: { team: "web", ...ownershipTags(CLUSTER, svc, "publicip") },
      ipTags: [],
    });
  });

  it("keeps using the one it made", () => {
    expect(choose({}, [ours(`${CLUSTER}-${FE}`)])).toMatchObject({
      kind: "managed",
      name: `${CLUSTER}-${FE}`,
    });
  });

  it("never adopts a public IP of its own name that it did not make", () => {
    expect(refusal({}, [publicIp(`${CLUSTER}-${FE}`)]).reason).toBe("PublicIPNameTaken");
  });

  it("uses a user's public IP named by annotation as it is, and makes a named one that does not exist", () => {
    expect(choose({ [`${A}azure-pip-name`]: "Mine" }, [publicIp("mine")])).toEqual({
      kind: "user",
      name: "mine",
      resourceGroup: RG,
      id: resourceId(SUB, RG, "publicIPAddresses", "mine"),
    });
    expect(choose({ [`${A}azure-pip-name`]: "new-ip" }, [])).toMatchObject({
      kind: "managed",
      name: "new-ip",
    });
  });

  it("finds a requested address among the resource group's public IPs, in another group when annotated", () => {
    const other = publicIp("reserved", {
      id: resourceId(SUB, "ips", "publicIPAddresses", "reserved"),
      ipAddress: "20.9.9.9",
    });
    expect(
      choose(
        { [`${A}azure-load-balancer-ipv4`]: "20.9.9.9", [`${A}azure-load-balancer-resource-group`]: "ips" },
        [other],
      ),
    ).toEqual({
      kind: "user",
      name: "reserved",
      resourceGroup: "ips",
      id: other.id,
    });
    expect(choose({}, [publicIp("reserved", { ipAddress: "20.9.9.9" })], "20.9.9.9")).toMatchObject({
      kind: "user",
    });
    expect(refusal({ [`${A}azure-load-balancer-ipv4`]: "20.9.9.9" }, [other]).reason).toBe(
      "PublicIPNotFound",
    );
  });

  it("uses its own public IP found by address as its own", () => {
    expect(choose({ [`${A}azure-load-balancer-ipv4`]: "20.0.0.1" }, [ours("kept")])).toMatchObject({
      kind: "managed",
      name: "kept",
    });
  });

  it.each([
    [
      "another cluster's",
      { [`${A}azure-pip-name`]: "theirs" },
      [
        publicIp("theirs", {
          tags: ownershipTags("other-cluster", { namespace: "a", name: "b", uid: OTHER_UID }, "publicip"),
        }),
      ],
      "PublicIPInUse",
    ],
    [
      "one something else uses",
      { [`${A}azure-pip-name`]: "busy" },
      [
        publicIp("busy", {
          ipConfiguration: { id: "/subscriptions/x/networkInterfaces/nic/ipConfigurations/ipconfig1" },
        }),
      ],
      "PublicIPInUse",
    ],
    [
      "a Basic one",
      { [`${A}azure-pip-name`]: "old" },
      [publicIp("old", { sku: { name: "Basic" } })],
      "PublicIPNotStandard",
    ],
    [
      "a dynamic one",
      { [`${A}azure-pip-name`]: "dyn" },
      [publicIp("dyn", { publicIPAllocationMethod: "Dynamic" })],
      "PublicIPNotStandard",
    ],
    [
      "a name and an address of two different public IPs",
      { [`${A}azure-pip-name`]: "a", [`${A}azure-load-balancer-ipv4`]: "20.0.0.2" },
      [publicIp("a"), publicIp("b", { ipAddress: "20.0.0.2" })],
      "PublicIPConflict",
    ],
  ])("refuses %s", (_, annotations, pips, reason) => {
    expect(refusal(annotations, pips).reason).toBe(reason);
  });

  it("accepts a public IP already on this Service's frontend", () => {
    const onOurs = publicIp("mine", {
      ipConfiguration: {
        id: `${resourceId(SUB, RG, "loadBalancers", CLUSTER)}/frontendIPConfigurations/${FE}`,
      },
    });
    expect(choose({ [`${A}azure-pip-name`]: "mine" }, [onOurs])).toMatchObject({ kind: "user" });
  });
});
