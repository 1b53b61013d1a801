// Public IP prefixes: a block of addresses public IPs are allocated from, strictly: every address inside the
// block, a full block refused, the prefix fixed on its public IPs and kept while they exist.
import { describe, expect, test } from "vitest";
import { FAST, LOCATION, createResourceGroup, networkId, rejection, useTestbed } from "./testbed.ts";
import { containsIp, parsePrefix } from "./ipam.ts";

const RG = "prefix-tests";
const tb = useTestbed({}, async (tb) => {
  await createResourceGroup(tb, RG);
});

const fromPrefix = (prefixId: string | undefined, extra: object = {}) => ({
  location: LOCATION,
  sku: { name: "Standard" as const },
  publicIPAllocationMethod: "Static" as const,
  ...(prefixId ? { publicIPPrefix: { id: prefixId } } : {}),
  ...extra,
});

async function prefix(name: string, length: number) {
  return tb.network.publicIPPrefixes.createOrUpdate(
    RG,
    name,
    { location: LOCATION, sku: { name: "Standard" }, prefixLength: length, publicIPAddressVersion: "IPv4" },
    FAST,
  );
}

describe("public IP prefixes", () => {
  test("hand out addresses inside the block until it is full, then 400 PublicIpPrefixOutOfIpAddresses", async () => {
    const made = await prefix("block", 31);
    const range = parsePrefix(made.ipPrefix!)!;
    expect(made.prefixLength).toBe(31);
    const a = await tb.network.publicIPAddresses.createOrUpdate(RG, "a", fromPrefix(made.id), FAST);
    const b = await tb.network.publicIPAddresses.createOrUpdate(RG, "b", fromPrefix(made.id), FAST);
    expect([a.ipAddress, b.ipAddress].every((ip) => containsIp(range, ip!))).toBe(true);
    expect(a.ipAddress).not.toBe(b.ipAddress);
    expect(a.publicIPPrefix?.id).toBe(made.id);
    const full = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(RG, "c", fromPrefix(made.id), FAST),
    );
    expect(full).toMatchObject({ status: 400, code: "PublicIpPrefixOutOfIpAddresses" });
    expect((await tb.network.publicIPPrefixes.get(RG, "block")).publicIPAddresses?.map((p) => p.id)).toEqual([
      a.id,
      b.id,
    ]);
    // A deleted public IP's address goes back to the prefix.
    await tb.network.publicIPAddresses.delete(RG, "a", FAST);
    const c = await tb.network.publicIPAddresses.createOrUpdate(RG, "c", fromPrefix(made.id), FAST);
    expect(c.ipAddress).toBe(a.ipAddress);
  });

  test("is refused when it does not exist, and cannot be added to, changed on or removed from a public IP", async () => {
    const missing = networkId(tb, RG, "publicIPPrefixes", "nowhere");
    expect(
      await rejection(tb.strict.publicIPAddresses.createOrUpdate(RG, "p", fromPrefix(missing), FAST)),
    ).toMatchObject({ status: 400, code: "InvalidResourceReference" });
    const made = await prefix("block", 30);
    await tb.network.publicIPAddresses.createOrUpdate(RG, "p", fromPrefix(made.id), FAST);
    const dropped = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(RG, "p", fromPrefix(undefined), FAST),
    );
    expect(dropped).toMatchObject({ status: 400, code: "PublicIPPrefixCannotBeModified" });
    await tb.network.publicIPAddresses.createOrUpdate(RG, "q", fromPrefix(undefined), FAST);
    const added = await rejection(
      tb.strict.publicIPAddresses.createOrUpdate(RG, "q", fromPrefix(made.id), FAST),
    );
    expect(added).toMatchObject({ status: 400, code: "PublicIPPrefixCannotBeModified" });
  });

  test("is kept while public IPs use it; lengths outside /28-/31 are refused", async () => {
    const made = await prefix("block", 28);
    expect(made.ipPrefix).toMatch(/\/28$/);
    await tb.network.publicIPAddresses.createOrUpdate(RG, "p", fromPrefix(made.id), FAST);
    expect(await rejection(tb.strict.publicIPPrefixes.delete(RG, "block", FAST))).toMatchObject({
      status: 400,
      code: "PublicIPPrefixInUseCannotBeDeleted",
    });
    await tb.network.publicIPAddresses.delete(RG, "p", FAST);
    await tb.network.publicIPPrefixes.delete(RG, "block", FAST);
    expect(
      await rejection(
        tb.strict.publicIPPrefixes.createOrUpdate(
          RG,
          "wide",
          { location: LOCATION, sku: { name: "Standard" }, prefixLength: 24 },
          FAST,
        ),
      ),
    ).toMatchObject({ status: 400, code: "InvalidPublicIPPrefixLength" });
  });
});
