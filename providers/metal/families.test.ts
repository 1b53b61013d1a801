import { describe, expect, it } from "vitest";
import { planFamilies } from "./families.ts";
import { service } from "../../test/unit/support/metal.ts";

function wants(...args: Parameters<typeof planFamilies>): string[] {
  const plan = planFamilies(...args);
  if (!plan.ok) throw new Error(plan.error.message);
  return plan.wants.map(
    (w) => `${w.family}${w.required ? "" : "?"}${w.requested ? `=${w.requested.text}` : ""}`,
  );
}

describe("planFamilies", () => {
  it("follows ipFamilyPolicy", () => {
    expect(
      wants(service("ns/a", { ipFamilies: ["IPv6", "IPv4"], ipFamilyPolicy: "SingleStack" }), {}),
    ).toEqual(["IPv6"]);
    expect(
      wants(service("ns/a", { ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "PreferDualStack" }), {}),
    ).toEqual(["IPv4", "IPv6?"]);
    // A single-stack cluster lists one family even for PreferDualStack.
    expect(wants(service("ns/a", { ipFamilies: ["IPv4"], ipFamilyPolicy: "PreferDualStack" }), {})).toEqual([
      "IPv4",
    ]);
    expect(wants(service("ns/a", { ipFamilies: ["IPv6"], ipFamilyPolicy: "RequireDualStack" }), {})).toEqual([
      "IPv6",
      "IPv4",
    ]);
  });

  it("defaults to the requested family, then to IPv4, when ipFamilies is empty", () => {
    expect(wants({ key: "ns/a", ports: [] }, {})).toEqual(["IPv4"]);
    expect(wants({ key: "ns/a", ports: [], ipFamilies: [] }, { addresses: ["fd00::1"] })).toEqual([
      "IPv6=fd00::1",
    ]);
  });

  it("orders requested addresses by the Service's families", () => {
    expect(
      wants(service("ns/a", { ipFamilies: ["IPv6", "IPv4"], ipFamilyPolicy: "RequireDualStack" }), {
        addresses: ["10.0.0.1", "fd00::1"],
      }),
    ).toEqual(["IPv6=fd00::1", "IPv4=10.0.0.1"]);
  });

  it("names the field it was given in errors", () => {
    const plan = planFamilies(service("ns/a"), { addresses: ["nonsense"], addressesField: "the-field" });
    expect(plan).toMatchObject({
      ok: false,
      error: { reason: "InvalidRequestedAddress", field: "the-field" },
    });
  });
});
