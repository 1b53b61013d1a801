// A Service's address is what its clients use: when Portico gives it another one without being asked (its pool
// was edited, or no longer serves it), that is a Warning saying which address went, why, and which came.
import { describe, expect, test } from "vitest";
import { intent } from "../../test/unit/support/awsIntent.ts";
import type { LoadBalancerIntent } from "../provider.ts";
import { MetalProvider, type PoolObject } from "./provider.ts";

/** One pool, lan, whose spec the test edits. */
function world(spec: Record<string, unknown>) {
  const pools: PoolObject[] = [{ name: "lan", spec }];
  const provider = new MetalProvider({ pools: () => pools, assignments: () => [], nodeAddresses: () => [] });
  return { provider, edit: (next: Record<string, unknown>) => void (pools[0] = { name: "lan", spec: next }) };
}

const web = (over: Partial<LoadBalancerIntent> = {}) =>
  intent({
    service: { namespace: "shop", name: "web", uid: "u1" },
    loadBalancerClass: "portico.io/metal",
    ...over,
  });

const warnings = (notices: readonly { type: string; reason: string; message: string }[]) =>
  notices.filter((n) => n.type === "Warning");

describe("an address the Service did not ask to lose", () => {
  test("a pool edited so the address leaves it: a Warning naming both addresses and why, once", async () => {
    const { provider, edit } = world({ addresses: ["192.0.2.0-192.0.2.3"] });
    expect((await provider.ensure(web())).ingress).toEqual([{ ip: "192.0.2.0", ipMode: "VIP" }]);
    edit({ addresses: ["192.0.2.8-192.0.2.11"] });
    expect(await provider.plan(web())).toEqual({
      operations: [
        "assign 192.0.2.8 from pool lan",
        expect.stringMatching(
          /^change address: 192.0.2.0 is no longer in any IPAddressPool, so the Service's address is now 192.0.2.8/,
        ),
      ],
    });
    const moved = await provider.ensure(web());
    expect(moved.ingress).toEqual([{ ip: "192.0.2.8", ipMode: "VIP" }]);
    expect(moved.changes).toEqual(["assigned 192.0.2.8 from pool lan"]);
    expect(warnings(moved.notices)).toEqual([
      {
        type: "Warning",
        reason: "AddressChanged",
        message:
          "192.0.2.0 is no longer in any IPAddressPool, so the Service's address is now 192.0.2.8; point clients " +
          "and DNS records at 192.0.2.8 (a Service that asks for its address, with spec.loadBalancerIP or the " +
          "metallb.io/loadBalancerIPs annotation, is refused instead of moved)",
      },
    ]);
    // Told once: the next pass finds the new address held and says nothing.
    const again = await provider.ensure(web());
    expect(again.changes).toEqual([]);
    expect(warnings(again.notices)).toEqual([]);
  });

  test("a pool that stops serving the Service's namespace: the Warning says so", async () => {
    const pools: PoolObject[] = [
      { name: "lan", spec: { addresses: ["192.0.2.0/30"] } },
      { name: "spare", spec: { addresses: ["192.0.2.16/30"] } },
    ];
    const provider = new MetalProvider({
      pools: () => pools,
      assignments: () => [],
      nodeAddresses: () => [],
    });
    expect((await provider.ensure(web())).ingress).toEqual([{ ip: "192.0.2.0", ipMode: "VIP" }]);
    pools[0] = {
      name: "lan",
      spec: { addresses: ["192.0.2.0/30"], serviceAllocation: { namespaces: ["elsewhere"] } },
    };
    const moved = await provider.ensure(web());
    expect(moved.ingress).toEqual([{ ip: "192.0.2.16", ipMode: "VIP" }]);
    const [changed, ...more] = warnings(moved.notices);
    expect(more).toEqual([]);
    expect(changed?.reason).toBe("AddressChanged");
    expect(changed?.message).toMatch(
      /^192.0.2.0 is in IPAddressPool lan, which does not serve this Service \(its spec.serviceAllocation\), so the Service's address is now 192.0.2.16;/,
    );
  });

  test("an address the Service asked for is not moved: the Service is refused and keeps it", async () => {
    const { provider, edit } = world({ addresses: ["192.0.2.0/30"] });
    const asked = web({ loadBalancerIP: "192.0.2.2" });
    expect((await provider.ensure(asked)).ingress).toEqual([{ ip: "192.0.2.2", ipMode: "VIP" }]);
    edit({ addresses: ["192.0.2.8/30"] });
    await expect(Promise.resolve().then(() => provider.ensure(asked))).rejects.toMatchObject({
      reason: "AddressNotInAnyPool",
      field: "spec.loadBalancerIP",
    });
  });

  test("a change the Service asks for is no Warning", async () => {
    const { provider } = world({ addresses: ["192.0.2.0/30"] });
    await provider.ensure(web());
    const moved = await provider.ensure(web({ loadBalancerIP: "192.0.2.3" }));
    expect(moved.ingress).toEqual([{ ip: "192.0.2.3", ipMode: "VIP" }]);
    expect(moved.changes).toEqual(["assigned 192.0.2.3 from pool lan"]);
    expect(warnings(moved.notices)).toEqual([]);
  });
});
