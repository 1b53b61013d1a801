import { describe, expect, test } from "vitest";
import { declaresCounts, metallbCount } from "./metallbPoolStatus.ts";

const crd = (status: object | undefined, subresource = true) => ({
  spec: {
    versions: [
      {
        name: "v1beta1",
        ...(subresource ? { subresources: { status: {} } } : {}),
        schema: { openAPIV3Schema: { properties: { spec: {}, ...(status ? { status } : {}) } } },
      },
    ],
  },
});

const COUNTED = {
  type: "object",
  properties: {
    assignedIPv4: { type: "integer" },
    assignedIPv6: { type: "integer" },
    availableIPv4: { type: "integer" },
    availableIPv6: { type: "integer" },
  },
};

describe("MetalLB's IPAddressPool status", () => {
  test("counts are written only where the installed CRD declares them (MetalLB v0.15 and later)", () => {
    expect(declaresCounts(crd(COUNTED))).toBe(true);
    // MetalLB v0.14: a status object without fields; the apiserver would prune anything written.
    expect(declaresCounts(crd({ type: "object" }))).toBe(false);
    expect(declaresCounts(crd(COUNTED, false))).toBe(false);
    expect(declaresCounts(crd(undefined))).toBe(false);
    expect(declaresCounts({})).toBe(false);
  });

  test("counts are integers, capped where JSON numbers stop being exact (an IPv6 /64 is 2^64)", () => {
    expect(metallbCount(5n)).toBe(5);
    expect(metallbCount(2n ** 64n)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
