import type { V1Service } from "@kubernetes/client-node";
import { expect, test } from "vitest";
import {
  classServedUnder,
  LBC_NLB_CLASS,
  MANAGED_BY_ANNOTATION,
  tookOn,
  wantsLoadBalancer,
} from "../providers/classes.ts";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";

const svc = (cls?: string, type?: string): V1Service => ({
  metadata: {
    name: "web",
    ...(type ? { annotations: { "service.beta.kubernetes.io/aws-load-balancer-type": type } } : {}),
  },
  spec: { type: "LoadBalancer", ...(cls ? { loadBalancerClass: cls } : {}) },
});

test("taking over from the AWS Load Balancer Controller: its class and unclassed Services of its types, beside Portico's own", () => {
  const lbc = {
    loadBalancerClass: "portico.io/aws-nlb",
    alsoServes: [LBC_NLB_CLASS],
    defaultForUnclassed: false,
  };
  expect(wantsLoadBalancer(svc(LBC_NLB_CLASS), lbc)).toBe(true);
  expect(wantsLoadBalancer(svc("portico.io/aws-nlb"), lbc)).toBe(true);
  expect(wantsLoadBalancer(svc(undefined, "external"), lbc)).toBe(true);
  expect(wantsLoadBalancer(svc(undefined, "nlb-ip"), lbc)).toBe(true);
  // "nlb" and no annotation are the in-tree cloud provider's; another class is another controller's.
  expect(wantsLoadBalancer(svc(undefined, "nlb"), lbc)).toBe(false);
  expect(wantsLoadBalancer(svc(), lbc)).toBe(false);
  expect(wantsLoadBalancer(svc("example.com/other", "external"), lbc)).toBe(false);
  // Without taking over, the type annotation chooses nothing, and the LBC class is another controller's.
  const own = { loadBalancerClass: "portico.io/aws-nlb", defaultForUnclassed: false };
  expect(wantsLoadBalancer(svc(undefined, "external"), own)).toBe(false);
  expect(wantsLoadBalancer(svc(LBC_NLB_CLASS), own)).toBe(false);
});

test("a Service is taken on under its own class, or the controller's when it has none; either is recognised later", () => {
  const lbc = {
    loadBalancerClass: "portico.io/aws-nlb",
    alsoServes: [LBC_NLB_CLASS],
    defaultForUnclassed: false,
  };
  expect(classServedUnder(svc(LBC_NLB_CLASS), lbc)).toBe(LBC_NLB_CLASS);
  expect(classServedUnder(svc(undefined, "external"), lbc)).toBe("portico.io/aws-nlb");
  const managed = (by: string): V1Service => ({ metadata: { annotations: { [MANAGED_BY_ANNOTATION]: by } } });
  expect(tookOn(managed(LBC_NLB_CLASS), lbc)).toBe(true);
  expect(tookOn(managed("portico.io/aws-nlb"), lbc)).toBe(true);
  expect(
    tookOn(managed(LBC_NLB_CLASS), { loadBalancerClass: "portico.io/aws-nlb", defaultForUnclassed: false }),
  ).toBe(false);
});

test("--aws-take-over-lbc serves the AWS Load Balancer Controller's class beside the controller's own, with the aws provider only", () => {
  const base = ["--cluster-name", "prod"];
  const taking = parseConfig([...base, "--aws-take-over-lbc"], {});
  expect([taking.loadBalancerClass, taking.alsoServes]).toEqual(["portico.io/aws-nlb", [LBC_NLB_CLASS]]);
  expect(taking.leaderElection.name).toBe("portico-controller-portico-io-aws-nlb");
  expect(parseConfig(base, {}).alsoServes).toBeUndefined();
  expect(() => parseConfig([...base, "--aws-take-over-lbc", "--provider", "metal"], {})).toThrow(UsageError);
  expect(() =>
    parseConfig([...base, "--aws-take-over-lbc", "--load-balancer-class", LBC_NLB_CLASS], {}),
  ).toThrow(/drop --load-balancer-class/);
});

test("--metrics-address takes host:port, [ipv6]:port or :port, and refuses anything else at start", () => {
  const base = ["--cluster-name", "prod"];
  expect(parseConfig([...base, "--metrics-address", "[::1]:8080"], {}).metricsAddress).toBe("[::1]:8080");
  expect(() => parseConfig([...base, "--metrics-address", "8080"], {})).toThrow(UsageError);
});
