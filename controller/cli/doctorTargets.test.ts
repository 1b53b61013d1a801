// The doctor's target type is the provider's: for every Service the AWS provider refuses (each pair of its
// combinations table, and the demo's `broken` Service), the doctor reports the refusal and no path — never "ip
// targets", nodes or health checks that would contradict it — and a Service it serves gets the provider's answer.
import { describe, expect, it } from "vitest";
import { AWS_COMBINATIONS } from "../../providers/aws/annotations/combinations.ts";
import { AWS_LOAD_BALANCER_CLASS } from "../../providers/classes.ts";
import { node, service } from "../../test/unit/support/controllerObjects.ts";
import { judgeTargets } from "./doctorTargets.ts";
import { trafficChecks } from "./doctorTraffic.ts";

const nodes = [node("a"), node("b")];
const where = { clusterName: "prod", access: {} };
const aws = (spec: Record<string, unknown>, annotations: Record<string, string> = {}) =>
  service({ loadBalancerClass: AWS_LOAD_BALANCER_CLASS, ...spec }, annotations);

describe("doctor takes the target type from the provider", () => {
  it("the demo's broken Service (no node ports, instance targets named) is refused, not called ip targets", async () => {
    const svc = aws(
      { allocateLoadBalancerNodePorts: false },
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "instance" },
    );
    const judged = await judgeTargets(svc, nodes, [], where);
    expect("refused" in judged && judged.refused.message).toMatch(/instance targets/);
    const findings = trafficChecks({ svc, targets: judged, nodes, slices: [], pods: [] });
    expect(findings.filter((f) => f.result === "ok" && /ip targets|targets|nodes/.test(f.detail))).toEqual(
      [],
    );
    expect(findings.find((f) => f.check === "targets")?.result).toBe("bad");
  });

  it.for(AWS_COMBINATIONS.entries.map((e) => [e.fields.join(" + "), e] as const))(
    "refused pair %s: doctor says so and claims no path",
    async ([, entry]) => {
      const ports = entry.example.spec?.ports as { port: number }[] | undefined;
      const spec = ports
        ? { ...entry.example.spec, ports: ports.map((p, i) => ({ nodePort: 30100 + i, ...p })) }
        : {
            ...entry.example.spec,
          };
      const svc = aws(spec, { ...entry.example.annotations });
      const judged = await judgeTargets(svc, nodes, [], where);
      // The timeout/interval pair is judged where the health check is built, past the target type.
      if (entry.checkedIn) return expect(judged).toHaveProperty("type");
      expect(judged).toHaveProperty("refused");
      const findings = trafficChecks({ svc, targets: judged, nodes, slices: [], pods: [] });
      expect(findings.map((f) => f.check)).not.toContain("nodes");
      expect(findings.map((f) => f.check)).not.toContain("health checks");
    },
  );

  it("a Service the provider serves gets the provider's own answer", async () => {
    expect(await judgeTargets(aws({}), nodes, [], where)).toEqual({ type: "instance" });
    const ip = aws({}, { "service.beta.kubernetes.io/aws-load-balancer-type": "nlb-ip" });
    expect(await judgeTargets(ip, nodes, [], where)).toEqual({ type: "ip" });
  });

  it("judges with the controller's default scheme, as published on its Lease", async () => {
    const eips = aws(
      {},
      { "service.beta.kubernetes.io/aws-load-balancer-eip-allocations": "eipalloc-01,eipalloc-02" },
    );
    expect(await judgeTargets(eips, nodes, [], where)).toHaveProperty("refused");
    expect(
      await judgeTargets(eips, nodes, [], {
        ...where,
        access: { published: { provider: "aws", settings: { defaultScheme: "internet-facing" } } },
      }),
    ).toEqual({
      type: "instance",
    });
  });
});
