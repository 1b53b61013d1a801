import type { V1Service } from "@kubernetes/client-node";
import { expect, test } from "vitest";
import { LBC_NLB_CLASS, wantsLoadBalancer } from "./classes.ts";
import { parseConfig, UsageError } from "./config.ts";

const svc = (cls?: string, type?: string): V1Service => ({
  metadata: {
    name: "web",
    ...(type ? { annotations: { "service.beta.kubernetes.io/aws-load-balancer-type": type } } : {}),
  },
  spec: { type: "LoadBalancer", ...(cls ? { loadBalancerClass: cls } : {}) },
});

test("taking over from the AWS Load Balancer Controller: its class, and unclassed Services of its types", () => {
  const lbc = { loadBalancerClass: LBC_NLB_CLASS, defaultForUnclassed: false };
  expect(wantsLoadBalancer(svc(LBC_NLB_CLASS), lbc)).toBe(true);
  expect(wantsLoadBalancer(svc(undefined, "external"), lbc)).toBe(true);
  expect(wantsLoadBalancer(svc(undefined, "nlb-ip"), lbc)).toBe(true);
  // "nlb" and no annotation are the in-tree cloud provider's; another class is another controller's.
  expect(wantsLoadBalancer(svc(undefined, "nlb"), lbc)).toBe(false);
  expect(wantsLoadBalancer(svc(), lbc)).toBe(false);
  expect(wantsLoadBalancer(svc("portico.io/aws-nlb", "external"), lbc)).toBe(false);
  // Without taking over, the type annotation chooses nothing.
  const own = { loadBalancerClass: "portico.io/aws-nlb", defaultForUnclassed: false };
  expect(wantsLoadBalancer(svc(undefined, "external"), own)).toBe(false);
});

test("--aws-take-over-lbc serves the AWS Load Balancer Controller's class, with the aws provider only", () => {
  const base = ["--cluster-name", "prod"];
  expect(parseConfig([...base, "--aws-take-over-lbc"], {}).loadBalancerClass).toBe(LBC_NLB_CLASS);
  expect(parseConfig([...base, "--aws-take-over-lbc"], {}).leaderElection.name).toBe(
    "portico-controller-service-k8s-aws-nlb",
  );
  expect(parseConfig(base, {}).loadBalancerClass).toBe("portico.io/aws-nlb");
  expect(() => parseConfig([...base, "--aws-take-over-lbc", "--provider", "metal"], {})).toThrow(UsageError);
  expect(() =>
    parseConfig([...base, "--aws-take-over-lbc", "--load-balancer-class", "portico.io/aws-nlb"], {}),
  ).toThrow(/drop --load-balancer-class/);
});
