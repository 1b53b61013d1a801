import { describe, expect, test } from "vitest";
import { intent, NETWORK } from "../../test/unit/support/awsIntent.ts";
import { parseAwsSettings } from "./annotations/settings.ts";
import { desiredLoadBalancer } from "./loadBalancer/desired.ts";
import { awsTraffic, healthyEndpoints, podDrain, targetKey, type TargetStates } from "./traffic.ts";

const TWO_PORTS = [
  { name: "http", protocol: "TCP" as const, port: 80, nodePort: 30080 },
  { name: "https", protocol: "TCP" as const, port: 443, nodePort: 30443 },
];
const desired = (over = {}) =>
  desiredLoadBalancer(intent(over), parseAwsSettings({}, { scheme: "internal" }), NETWORK, "prod");

/** ELBv2's states for every target of every target group of `lb`, as `pick` says per target group and target. */
function states(
  lb: ReturnType<typeof desired>,
  pick: (tgIndex: number, targetIndex: number) => string | undefined,
): TargetStates {
  const out = new Map<string, { state: string; reason?: string }>();
  lb.targetGroups.forEach((tg, i) =>
    tg.targets.forEach((t, j) => {
      const state = pick(i, j);
      if (state) out.set(targetKey(tg.name, t.id, t.port), { state, reason: "Target.FailedHealthChecks" });
    }),
  );
  return out;
}

describe("awsTraffic", () => {
  test("flows when every port has a healthy target, and says how many", () => {
    const lb = desired({ ports: TWO_PORTS });
    const t = awsTraffic(
      intent(),
      lb,
      states(lb, (_, j) => (j === 0 ? "healthy" : "unhealthy")),
    );
    expect(t).toEqual({ flowing: true, reason: "TargetsHealthy", message: "2 of 4 targets healthy" });
  });

  test("does not flow with no target at all: no eligible node", () => {
    const lb = desired({ nodes: [] });
    expect(awsTraffic(intent(), lb, new Map())).toMatchObject({ flowing: false, reason: "NoTargets" });
    expect(awsTraffic(intent(), lb, new Map()).message).toMatch(/^no target is registered for port 80/);
  });

  test("does not flow when one port's targets all fail, naming the port and a failing target", () => {
    const lb = desired({ ports: TWO_PORTS });
    const t = awsTraffic(
      intent(),
      lb,
      states(lb, (i) => (i === 0 ? "healthy" : "unhealthy")),
    );
    expect(t.flowing).toBe(false);
    expect(t.reason).toBe("TargetsUnhealthy");
    expect(t.message).toMatch(
      /every target of port 443 fails its health check \(i-0000000000000000a:30443 unhealthy \(Target.FailedHealthChecks\)\)/,
    );
  });

  test("is not known yet while targets are new or in initial, and flows once one passes", () => {
    const lb = desired();
    expect(awsTraffic(intent(), lb, new Map())).toMatchObject({
      flowing: undefined,
      reason: "HealthChecksPending",
    });
    expect(
      awsTraffic(
        intent(),
        lb,
        states(lb, () => "initial"),
      ).flowing,
    ).toBeUndefined();
    expect(
      awsTraffic(
        intent(),
        lb,
        states(lb, (_, j) => (j ? "unhealthy" : "initial")),
      ).flowing,
    ).toBeUndefined();
    expect(
      awsTraffic(
        intent(),
        lb,
        states(lb, (_, j) => (j ? "initial" : "healthy")),
      ).flowing,
    ).toBe(true);
  });

  test("targets ELBv2 does not use count as failing", () => {
    const lb = desired();
    expect(
      awsTraffic(
        intent(),
        lb,
        states(lb, () => "unused"),
      ),
    ).toMatchObject({ flowing: false, reason: "TargetsUnhealthy" });
  });

  // ELBv2 may call every instance target healthy (kube-proxy answers a TCP check on the node port with no endpoint
  // behind it, and a real NLB reports the last result for a while after a change): the cluster decides first.
  test("no ready endpoint: NoReadyEndpoints although ELBv2 calls every target healthy (Cluster, Local, ip)", () => {
    for (const over of [
      { endpoints: [] },
      { endpoints: [], externalTrafficPolicy: "Local" as const, healthCheckNodePort: 32000 },
    ]) {
      const lb = desired(over);
      expect(
        awsTraffic(
          intent(over),
          lb,
          states(lb, () => "healthy"),
        ),
      ).toMatchObject({
        flowing: false,
        reason: "NoReadyEndpoints",
      });
    }
    const ipSettings = parseAwsSettings(
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
      { scheme: "internal" },
    );
    const ip = desiredLoadBalancer(intent({ endpoints: [] }), ipSettings, NETWORK, "prod");
    expect(awsTraffic(intent({ endpoints: [] }), ip, new Map())).toMatchObject({
      reason: "NoReadyEndpoints",
    });
  });

  test("Local: the only endpoint on a node that is not a target is NoLocalEndpoints, however healthy ELBv2 says", () => {
    const over = {
      externalTrafficPolicy: "Local" as const,
      healthCheckNodePort: 32000,
      endpoints: [{ ip: "10.0.1.5", nodeName: "n3", ports: { http: 8080 } }],
    };
    const lb = desired(over);
    const t = awsTraffic(
      intent(over),
      lb,
      states(lb, () => "healthy"),
    );
    expect(t).toMatchObject({ flowing: false, reason: "NoLocalEndpoints" });
    expect(t.message).toMatch(/run on n3, which is not a target/);
    // On a target node, ELBv2's word decides again.
    const onTarget = { ...over, endpoints: [{ ...over.endpoints[0]!, nodeName: "n2" }] };
    const lb2 = desired(onTarget);
    expect(
      awsTraffic(
        intent(onTarget),
        lb2,
        states(lb2, () => "healthy"),
      ),
    ).toMatchObject({
      flowing: true,
      reason: "TargetsHealthy",
    });
  });
});

describe("healthyEndpoints", () => {
  const ipTargets = (over = {}) =>
    desiredLoadBalancer(
      intent({ ports: TWO_PORTS, ...over }),
      parseAwsSettings(
        { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
        { scheme: "internal" },
      ),
      NETWORK,
      "prod",
    );

  test("a pod healthy in every target group that holds it; one failing or unchecked group holds it back", () => {
    const lb = ipTargets({
      endpoints: [
        { ip: "10.0.1.5", ports: { http: 8080, https: 8443 } },
        { ip: "10.0.1.6", ports: { http: 8080, https: 8443 } },
        { ip: "10.0.1.7", ports: { http: 8080, https: 8443 } },
      ],
    });
    expect(lb.targetGroups.map((tg) => tg.targets.length)).toEqual([3, 3]);
    const s = states(lb, (i, j) =>
      j === 0 ? "healthy" : j === 1 ? (i === 0 ? "healthy" : "unhealthy") : i === 0 ? "healthy" : undefined,
    );
    expect(healthyEndpoints(lb, s)).toEqual(["10.0.1.5"]);
  });

  test("instance targets: no pod's health to tell", () => {
    const lb = desired({ ports: TWO_PORTS });
    expect(
      healthyEndpoints(
        lb,
        states(lb, () => "healthy"),
      ),
    ).toBeUndefined();
  });
});

describe("podDrain", () => {
  const settings = (extra: Record<string, string>) =>
    parseAwsSettings(
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip", ...extra },
      { scheme: "internal" },
    );

  test("ip targets drain for the target groups' deregistration delay: ELBv2's 300 s, or the annotation's", () => {
    const byDefault = desiredLoadBalancer(intent({ ports: TWO_PORTS }), settings({}), NETWORK, "prod");
    expect(podDrain(byDefault)?.seconds).toBe(300);
    expect(podDrain(byDefault)?.setting).toContain(
      "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: deregistration_delay.timeout_seconds=<seconds>",
    );
    const set = settings({
      "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes":
        "deregistration_delay.timeout_seconds=20",
    });
    expect(podDrain(desiredLoadBalancer(intent({ ports: TWO_PORTS }), set, NETWORK, "prod"))?.seconds).toBe(
      20,
    );
  });

  test("instance targets: a pod's stop deregisters nothing", () => {
    expect(podDrain(desired({ ports: TWO_PORTS }))).toBeUndefined();
  });
});
