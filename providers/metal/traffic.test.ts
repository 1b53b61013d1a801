import { describe, expect, test } from "vitest";
import type { L2StatusFields } from "../../shared/l2status.ts";
import { intent } from "../../test/unit/support/awsIntent.ts";
import { metalTraffic, poolRecord } from "./traffic.ts";

const SERVED = intent({ endpoints: [{ ip: "10.0.0.5", nodeName: "n1", ports: { "": 8080 } }] });
const UNSERVED = intent({ endpoints: [] });

const record = (node: string, addresses: string[], extra: Partial<L2StatusFields> = {}): L2StatusFields => ({
  node,
  serviceName: "web",
  serviceNamespace: "apps",
  interfaces: [{ name: "eth0" }],
  addresses,
  ...extra,
});

describe("whether a bare-metal Service's traffic arrives", () => {
  test("flowing once a speaker records that it announces every address, naming node and interface", () => {
    const t = metalTraffic(
      SERVED,
      ["192.0.2.1", "2001:db8::1"],
      [record("n1", ["192.0.2.1"]), record("n2", ["2001:db8::1"])],
    );
    expect(t).toEqual({
      flowing: true,
      reason: "Announced",
      message: "Announced: 192.0.2.1 by node n1 on eth0; 2001:db8::1 by node n2 on eth0",
    });
  });

  test("not known while an address awaits its first announcement", () => {
    const t = metalTraffic(SERVED, ["192.0.2.1", "2001:db8::1"], [record("n1", ["192.0.2.1"])]);
    expect(t).toMatchObject({ flowing: undefined, reason: "AwaitingAnnouncement" });
    expect(t?.message).toContain("2001:db8::1");
    expect(metalTraffic(SERVED, ["192.0.2.1"], [])?.flowing).toBeUndefined();
  });

  test("not flowing when no node may announce an address, saying why", () => {
    const reporter = record("n3", [], { notAnnounced: [{ address: "192.0.2.1", reason: "noMatchingNode" }] });
    const t = metalTraffic(SERVED, ["192.0.2.1"], [reporter]);
    expect(t).toMatchObject({ flowing: false, reason: "NotAnnounced" });
    expect(t?.message).toMatch(/192\.0\.2\.1: no node that may announce it matches the nodeSelectors/);
    const noAd = record("n3", [], { notAnnounced: [{ address: "192.0.2.1", reason: "noAdvertisement" }] });
    expect(metalTraffic(SERVED, ["192.0.2.1"], [noAd])?.message).toMatch(/no L2Advertisement selects/);
  });

  test("not flowing without a ready endpoint, whatever the records say", () => {
    const t = metalTraffic(UNSERVED, ["192.0.2.1"], [record("n1", ["192.0.2.1"])]);
    expect(t).toMatchObject({ flowing: false, reason: "NoReadyEndpoints" });
    expect(t?.message).toMatch(/no ready endpoint/);
  });

  test("a record answering on every interface says so; two claims during a takeover are both named", () => {
    const everywhere = record("n1", ["192.0.2.1"], { interfaces: [] });
    expect(metalTraffic(SERVED, ["192.0.2.1"], [everywhere])?.message).toBe(
      "Announced: 192.0.2.1 by node n1 on every interface",
    );
    const two = metalTraffic(
      SERVED,
      ["192.0.2.1"],
      [record("n2", ["192.0.2.1"]), record("n1", ["192.0.2.1"])],
    );
    expect(two?.message).toBe("Announced: 192.0.2.1 by node n1 and node n2 on eth0");
  });

  test("nothing to say for a Service without an address", () => {
    expect(metalTraffic(SERVED, [], [])).toBeUndefined();
  });
});

describe("the pool record", () => {
  test("one name when every address came from one pool, both in ingress order when two pools served", () => {
    expect(poolRecord([{ pool: "lan" }])).toBe("lan");
    expect(poolRecord([{ pool: "lan" }, { pool: "lan" }])).toBe("lan");
    expect(poolRecord([{ pool: "v4" }, { pool: "v6" }])).toBe("v4,v6");
    expect(poolRecord([])).toBeUndefined();
  });
});
