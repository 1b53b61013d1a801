import { expect, test } from "vitest";
import { loadBalancerName, securityGroupName, targetGroupName } from "./names.ts";

test("names never hold two hyphens in a row, nor one at an end, which ELBv2 refuses", () => {
  const service = { namespace: "with---a-b", name: "web--x-", uid: "u" };
  const names = [
    loadBalancerName("c", service, "internal"),
    securityGroupName("c", service),
    targetGroupName(service, {
      loadBalancer: "lb",
      protocol: "TCP",
      port: 30080,
      targetType: "instance",
      vpcId: "vpc-1",
      listenerPort: 80,
    }),
  ];
  for (const name of names) {
    expect(name).toMatch(/^k8s-with-a-web-x-[0-9a-f]{10}$/);
    expect(name.length).toBeLessThanOrEqual(32);
  }
});
