import { expect, test } from "vitest";
import { wantsLoadBalancer } from "../../providers/classes.ts";
import type { RunningController } from "./controllers.ts";
import { servingConfigs, verdictOf } from "./migrate.ts";

test("a plan's verdict is its gravest line's: refuse, recreate, adopt, keep; other lines are changes", () => {
  expect(verdictOf(["refuse: LBC runs", "adopt NLB arn in place"])).toBe("refuse");
  expect(verdictOf(["recreate: scheme differs", "refused until ...", "create internet-facing NLB x"])).toBe(
    "recreate",
  );
  expect(verdictOf(["adopt NLB arn in place", "register i-1:30080 in tg"])).toBe("adopt");
  expect(verdictOf(["keep NLB arn (Portico's)", "register i-1:30080 in tg"])).toBe("keep");
  expect(verdictOf(["create internal NLB k8s-x"])).toBe("change");
  expect(verdictOf([])).toBe("keep");
  // A word that merely begins like a verdict is not one.
  expect(verdictOf(["adoption of nothing", "keeping"])).toBe("change");
  // A provider's note to keep another controller's object does not hide an adoption.
  expect(verdictOf(["adopt NLB arn in place", "keep TargetGroupBinding shop/k8s-shop-web-1 as it is"])).toBe(
    "adopt",
  );
});

test("which Services migrate looks at: the running controllers', LBC's with an AWS one, and the provider moved to", () => {
  const svc = (cls?: string, annotations: Record<string, string> = {}) => ({
    metadata: { name: "s", namespace: "n", annotations },
    spec: { type: "LoadBalancer", ...(cls ? { loadBalancerClass: cls } : {}) },
  });
  const served = (configs: ReturnType<typeof servingConfigs>, s: ReturnType<typeof svc>) =>
    configs.some((c) => wantsLoadBalancer(s, c.classes));
  // Nothing runs yet: an AWS take-over by default — LBC's Services, not MetalLB's unclassed ones.
  const aws = servingConfigs([]);
  expect(served(aws, svc("service.k8s.aws/nlb"))).toBe(true);
  expect(
    served(aws, svc(undefined, { "service.beta.kubernetes.io/aws-load-balancer-type": "external" })),
  ).toBe(true);
  expect(served(aws, svc())).toBe(false);
  // Moving from MetalLB: unclassed Services, with --provider metal --default-load-balancer.
  const metal = servingConfigs([], { provider: "metal", defaultForUnclassed: true });
  expect(served(metal, svc())).toBe(true);
  expect(served(metal, svc("service.k8s.aws/nlb"))).toBe(false);
  // A running metal controller's settings stand for the metal provider.
  const running = {
    fresh: true,
    lease: {},
    settings: {
      provider: "metal",
      loadBalancerClass: "portico.io/metal",
      defaultForUnclassed: false,
      clusterName: "lab",
    },
  } as unknown as RunningController;
  const withRunning = servingConfigs([running], { provider: "metal", defaultForUnclassed: true });
  expect(withRunning).toHaveLength(1);
  expect(served(withRunning, svc())).toBe(false);
});

test("a running controller of a class of its own, or confined to another namespace, does not stand for the provider", () => {
  const svc = (namespace: string, cls: string) => ({
    metadata: { name: "s", namespace },
    spec: { type: "LoadBalancer", loadBalancerClass: cls },
  });
  const controller = (settings: Record<string, unknown>) =>
    ({
      fresh: true,
      lease: {},
      settings: { provider: "aws", defaultForUnclassed: false, clusterName: "c", ...settings },
    }) as unknown as RunningController;
  const served = (configs: ReturnType<typeof servingConfigs>, s: ReturnType<typeof svc>) =>
    configs.find((c) => wantsLoadBalancer(s, c.classes));
  const own = controller({ loadBalancerClass: "example.com/own" });
  const confined = controller({
    loadBalancerClass: "portico.io/aws-nlb",
    namespace: "team-a",
    clusterName: "a",
  });
  const all = [own, confined];
  // In team-a the confined controller serves Portico's class, with its settings.
  expect(
    served(servingConfigs(all, undefined, "team-a"), svc("team-a", "portico.io/aws-nlb"))?.settings,
  ).toBe(confined.settings);
  // Elsewhere neither does: Portico's class is served as a controller started for AWS would serve it.
  const elsewhere = served(servingConfigs(all, undefined, "team-b"), svc("team-b", "portico.io/aws-nlb"));
  expect(elsewhere).toBeDefined();
  expect(elsewhere?.settings).toBeUndefined();
  // The controller of its own class serves its class everywhere.
  expect(served(servingConfigs(all, undefined, "team-b"), svc("team-b", "example.com/own"))?.settings).toBe(
    own.settings,
  );
});
