// Public IPs' DNS labels and IP tags: a label is one DNS record per region and shows as its FQDN; IP tags are
// fixed when the public IP is made.
import { describe, expect, test } from "vitest";
import { FAST, LOCATION, createResourceGroup, rejection, useTestbed } from "./testbed.ts";

const RG = "dns-tests";
const OTHER_RG = "dns-tests-2";
const tb = useTestbed({}, async (tb) => {
  await createResourceGroup(tb, RG);
  await createResourceGroup(tb, OTHER_RG);
});

const standard = (extra: object = {}) => ({
  location: LOCATION,
  sku: { name: "Standard" as const },
  publicIPAllocationMethod: "Static" as const,
  ...extra,
});

describe("DNS labels", () => {
  test("show as <label>.<region>.cloudapp.azure.com, and can be changed and removed", async () => {
    const made = await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      standard({ dnsSettings: { domainNameLabel: "shop-web" } }),
      FAST,
    );
    expect(made.dnsSettings).toEqual({
      domainNameLabel: "shop-web",
      fqdn: `shop-web.${LOCATION}.cloudapp.azure.com`,
    });
    const changed = await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      standard({ dnsSettings: { domainNameLabel: "shop-www" } }),
      FAST,
    );
    expect(changed.dnsSettings?.fqdn).toBe(`shop-www.${LOCATION}.cloudapp.azure.com`);
    expect(changed.ipAddress).toBe(made.ipAddress);
    const removed = await tb.network.publicIPAddresses.createOrUpdate(RG, "pip", standard(), FAST);
    expect(removed.dnsSettings).toBeUndefined();
  });

  test("a label another public IP of the region holds is 400 DnsRecordInUse, in any resource group", async () => {
    await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "first",
      standard({ dnsSettings: { domainNameLabel: "shop-web" } }),
      FAST,
    );
    const second = tb.strict.publicIPAddresses.createOrUpdate(
      OTHER_RG,
      "second",
      standard({ dnsSettings: { domainNameLabel: "shop-web" } }),
      FAST,
    );
    const err = await rejection(second);
    expect(err).toMatchObject({ status: 400, code: "DnsRecordInUse" });
    expect(err.message).toContain(
      `shop-web.${LOCATION}.cloudapp.azure.com is already used by another public IP`,
    );
    // Freed when its holder lets go of it.
    await tb.network.publicIPAddresses.createOrUpdate(RG, "first", standard(), FAST);
    const now = await tb.network.publicIPAddresses.createOrUpdate(
      OTHER_RG,
      "second",
      standard({ dnsSettings: { domainNameLabel: "shop-web" } }),
      FAST,
    );
    expect(now.dnsSettings?.domainNameLabel).toBe("shop-web");
  });

  test.each(["Shop", "a", "-web", "web-", "9web", "web_site"])(
    "%j is 400 InvalidDomainNameLabel",
    async (label) => {
      const err = await rejection(
        tb.strict.publicIPAddresses.createOrUpdate(
          RG,
          "pip",
          standard({ dnsSettings: { domainNameLabel: label } }),
          FAST,
        ),
      );
      expect(err).toMatchObject({ status: 400, code: "InvalidDomainNameLabel" });
    },
  );
});

describe("IP tags", () => {
  test("are kept as made, and changing them on an existing public IP is refused", async () => {
    const ipTags = [{ ipTagType: "RoutingPreference", tag: "Internet" }];
    const made = await tb.network.publicIPAddresses.createOrUpdate(RG, "pip", standard({ ipTags }), FAST);
    expect(made.ipTags).toEqual(ipTags);
    // The same tags again (with a new resource tag) are an ordinary update.
    const retagged = await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      standard({ ipTags, tags: { team: "web" } }),
      FAST,
    );
    expect(retagged.tags).toEqual({ team: "web" });
    const err = await rejection(tb.strict.publicIPAddresses.createOrUpdate(RG, "pip", standard(), FAST));
    expect(err).toMatchObject({ status: 400, code: "PublicIPAddressIpTagsCannotBeModified" });
    expect((await tb.network.publicIPAddresses.get(RG, "pip")).ipTags).toEqual(ipTags);
  });
});
