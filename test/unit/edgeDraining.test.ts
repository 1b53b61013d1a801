// The emulated NLB's deregistration: which targets drain, for how long, when a drain ends early, which ends cut
// the flows still open, and how DescribeTargetHealth lists the draining targets.
import { describe, expect, it } from "vitest";
import { Drains, drainSettings, openFlows, type DrainingTarget } from "../harness/cloudEdge/draining.ts";
import { rewriteTargetHealth } from "../harness/cloudEdge/healthReport.ts";
import type { EdgeTargetGroup } from "../harness/cloudEdge/nlbModel.ts";
import { targetGroup } from "./support/edge.ts";

const A = { id: "10.244.0.5", ip: "10.244.0.5", port: 8080 };
const B = { id: "10.244.1.5", ip: "10.244.1.5", port: 8080 };
const group = (targets: EdgeTargetGroup["targets"], attributes: Record<string, string> = {}) =>
  targetGroup({ targets, attributes });
const groups = (g: EdgeTargetGroup) => new Map([[g.arn, g]]);
const flowsTo =
  (...targets: string[]) =>
  (d: DrainingTarget) =>
    targets.includes(`${d.ip}:${d.port}`);
const FLOWS = flowsTo("10.244.0.5:8080", "10.244.1.5:8080");

describe("the drain's settings", () => {
  it("ELBv2's defaults: 300 s, flows left open", () => {
    expect(drainSettings(group([]))).toEqual({ delayMs: 300_000, terminate: false });
  });
  it("the target group's attributes", () => {
    const g = group([], {
      "deregistration_delay.timeout_seconds": "20",
      "deregistration_delay.connection_termination.enabled": "true",
    });
    expect(drainSettings(g)).toEqual({ delayMs: 20_000, terminate: true });
  });
});

describe("deregistered targets drain", () => {
  const attrs = { "deregistration_delay.timeout_seconds": "20" };

  it("a target that leaves its group drains for the delay, then is gone", () => {
    const drains = new Drains();
    expect(drains.step(groups(group([A, B], attrs)), 0, FLOWS)).toEqual({ draining: [], expired: [] });
    const left = drains.step(groups(group([B], attrs)), 1000, FLOWS);
    expect(left.draining).toEqual([{ group: "arn:tg/a", ...A, until: 21_000, terminate: false }]);
    expect(drains.step(groups(group([B], attrs)), 20_999, FLOWS).draining).toHaveLength(1);
    const end = drains.step(groups(group([B], attrs)), 21_000, FLOWS);
    expect(end.draining).toEqual([]);
    expect(end.expired).toEqual([{ group: "arn:tg/a", ...A, until: 21_000, terminate: false }]);
    expect(drains.step(groups(group([B], attrs)), 22_000, FLOWS)).toEqual({ draining: [], expired: [] });
  });

  it("carries the group's connection termination into the drain", () => {
    const cut = { ...attrs, "deregistration_delay.connection_termination.enabled": "true" };
    const drains = new Drains();
    drains.step(groups(group([A, B], cut)), 0, FLOWS);
    drains.step(groups(group([B], cut)), 0, FLOWS);
    expect(drains.step(groups(group([B], cut)), 20_000, FLOWS).expired[0]?.terminate).toBe(true);
  });

  it("ends at once, not expired, when the target has no flow left", () => {
    const drains = new Drains();
    drains.step(groups(group([A, B], attrs)), 0, FLOWS);
    expect(drains.step(groups(group([B], attrs)), 0, flowsTo("10.244.1.5:8080"))).toEqual({
      draining: [],
      expired: [],
    });
    drains.step(groups(group([A, B], attrs)), 0, FLOWS);
    expect(drains.step(groups(group([B], attrs)), 0, FLOWS).draining).toHaveLength(1);
    expect(drains.step(groups(group([B], attrs)), 5000, flowsTo())).toEqual({ draining: [], expired: [] });
  });

  it("a target registered again stops draining; a group that is gone takes its drains with it", () => {
    const drains = new Drains();
    drains.step(groups(group([A, B], attrs)), 0, FLOWS);
    drains.step(groups(group([B], attrs)), 0, FLOWS);
    expect(drains.step(groups(group([A, B], attrs)), 1000, FLOWS).draining).toEqual([]);
    drains.step(groups(group([B], attrs)), 2000, FLOWS);
    expect(drains.step(new Map(), 3000, FLOWS)).toEqual({ draining: [], expired: [] });
  });

  it("nothing drains on the first step, whatever is registered", () => {
    expect(new Drains().step(groups(group([B])), 0, FLOWS)).toEqual({ draining: [], expired: [] });
  });
});

describe("the open flows, from conntrack", () => {
  it("names each flow's destination and the target that answers it; closed TCP flows do not count", () => {
    const table = [
      "tcp      6 431995 ESTABLISHED src=192.0.2.10 dst=192.0.2.200 sport=40000 dport=80 src=10.244.1.5 dst=192.0.2.10 sport=8080 dport=40000 [ASSURED] mark=0 use=1",
      "tcp      6 110 TIME_WAIT src=192.0.2.10 dst=192.0.2.200 sport=40001 dport=80 src=10.244.0.5 dst=192.0.2.10 sport=8080 dport=40001 [ASSURED] mark=0 use=1",
      "udp      17 28 src=192.0.2.10 dst=192.0.2.201 sport=5000 dport=53 src=10.244.2.5 dst=192.0.2.10 sport=5353 dport=5000 mark=0 use=1",
      "conntrack v1.4.7 (conntrack-tools): 3 flow entries have been shown.",
    ].join("\n");
    expect(openFlows(table)).toEqual([
      { to: "192.0.2.200:80", target: "10.244.1.5:8080" },
      { to: "192.0.2.201:53", target: "10.244.2.5:5353" },
    ]);
  });
});

describe("DescribeTargetHealth lists the draining targets", () => {
  const draining = [{ id: "i-0abc", port: 31000 }];
  const member =
    "<member><Target><Id>i-0abc</Id><Port>31000</Port></Target><TargetHealth><State>draining</State><Reason>Target.DeregistrationInProgress</Reason><Description>Target deregistration is in progress</Description></TargetHealth></member>";

  it("after the registered ones", () => {
    const answer =
      "<DescribeTargetHealthResult><TargetHealthDescriptions><member><Target><Id>i-0def</Id><Port>31000</Port></Target><TargetHealth><State>healthy</State></TargetHealth></member></TargetHealthDescriptions></DescribeTargetHealthResult>";
    const out = rewriteTargetHealth(answer, () => "healthy", draining);
    expect(out).toContain(`</member>${member}</TargetHealthDescriptions>`);
    expect(out.match(/<member>/g)).toHaveLength(2);
  });

  it("when nothing else is registered, however the emulator writes an empty list", () => {
    for (const empty of [
      "<DescribeTargetHealthResult><TargetHealthDescriptions/></DescribeTargetHealthResult>",
      "<DescribeTargetHealthResult></DescribeTargetHealthResult>",
    ])
      expect(rewriteTargetHealth(empty, () => undefined, draining)).toBe(
        `<DescribeTargetHealthResult><TargetHealthDescriptions>${member}</TargetHealthDescriptions></DescribeTargetHealthResult>`,
      );
  });
});
