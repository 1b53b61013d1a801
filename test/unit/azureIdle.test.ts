// Azure's idle timeout on the emulated edge: idle time told from connection tracking's countdown, which flows a
// rule's timeout forgets, and what meets a packet of a forgotten flow (a reset, or silence).
import { describe, expect, it } from "vitest";
import {
  ESTABLISHED_TIMEOUT_S,
  establishedFlows,
  idleMangleRules,
  idleFlows,
} from "../harness/cloudEdge/azureIdle.ts";
import type { AzureEdgeRule } from "../harness/cloudEdge/azurePlan.ts";
import { azureRule } from "./support/edge.ts";

const rule = (over: Partial<AzureEdgeRule> = {}) => azureRule({ group: "g", ...over });
const line = (remaining: number, dst = "198.18.0.1", dport = 80, state = "ESTABLISHED") =>
  `tcp      6 ${remaining} ${state} src=192.0.2.10 dst=${dst} sport=40000 dport=${dport} src=192.0.2.11 dst=192.0.2.10 sport=30001 dport=40000 [ASSURED] mark=0 use=1`;

describe("idle flows", () => {
  it("reads each established TCP flow's idle time from its countdown; other states and protocols are left out", () => {
    const table = [
      line(ESTABLISHED_TIMEOUT_S - 3),
      line(100, "198.18.0.1", 80, "TIME_WAIT"),
      "udp      17 28 src=192.0.2.10 dst=198.18.0.1 sport=5000 dport=53 src=192.0.2.11 dst=192.0.2.10 sport=30053 dport=5000 mark=0 use=1",
    ].join("\n");
    expect(establishedFlows(table)).toEqual([
      { src: "192.0.2.10", sport: "40000", dst: "198.18.0.1", dport: "80", idleSeconds: 3 },
    ]);
  });

  it("a rule forgets its flows idle for its timeout (minutes scaled by the edge), not those idle for less", () => {
    const flows = establishedFlows(
      [line(ESTABLISHED_TIMEOUT_S - 3), line(ESTABLISHED_TIMEOUT_S - 4)].join("\n"),
    );
    expect(idleFlows(flows, [rule()], 1000).map((f) => f.idleSeconds)).toEqual([4]);
    expect(idleFlows(flows, [rule({ idleTimeoutMinutes: 30 })], 1000)).toEqual([]);
    expect(idleFlows(flows, [rule()], 60_000)).toEqual([]);
  });

  it("only flows through a TCP rule's frontend and port count; an HA-ports rule takes every port", () => {
    const flows = establishedFlows([line(0, "198.18.0.2"), line(0, "198.18.0.1", 443)].join("\n"));
    expect(idleFlows(flows, [rule()])).toEqual([]);
    expect(idleFlows(flows, [rule({ protocol: "Udp", frontendPort: 443 })])).toEqual([]);
    expect(idleFlows(flows, [rule({ protocol: "All", frontendPort: 0 })]).map((f) => f.dport)).toEqual([
      "443",
    ]);
  });
});

describe("packets of forgotten flows", () => {
  it("are marked for a reset by a rule with TCP reset, dropped by one without; UDP rules have none", () => {
    const rules = idleMangleRules([
      rule(),
      rule({ id: "rule-quiet", frontend: "198.18.0.2", tcpReset: false }),
      rule({ id: "rule-udp", protocol: "Udp" }),
      rule({ id: "rule-ha", frontend: "198.18.0.3", protocol: "All", frontendPort: 0 }),
    ]);
    expect(rules).toEqual([
      ":AZ-IDLE - [0:0]",
      "-A PREROUTING -m conntrack --ctstate INVALID -j AZ-IDLE",
      "-A AZ-IDLE -d 198.18.0.3/32 -p tcp -j MARK --set-mark 0x2000",
      "-A AZ-IDLE -d 198.18.0.2/32 -p tcp --dport 80 -j DROP",
      "-A AZ-IDLE -d 198.18.0.1/32 -p tcp --dport 80 -j MARK --set-mark 0x2000",
    ]);
  });
});
