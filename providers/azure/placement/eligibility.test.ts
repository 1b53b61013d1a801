import { describe, expect, it } from "vitest";
import { refusal } from "../../../test/unit/support/azure.ts";
import type { LoadBalancerConfiguration } from "./lbConfigurations.ts";
import { CONFIGURATIONS_ANNOTATION, placeService, type PlacementInput } from "./eligibility.ts";

const K: LoadBalancerConfiguration = { name: "kubernetes", primaryVMSet: "pool-a" };
const B: LoadBalancerConfiguration = { name: "lb-b", primaryVMSet: "pool-b" };
const C: LoadBalancerConfiguration = { name: "lb-c", primaryVMSet: "pool-c" };
const TEAM_NS: LoadBalancerConfiguration = {
  name: "team",
  primaryVMSet: "pool-t",
  serviceNamespaceSelector: { matchLabels: { team: "blue" } },
};
const EDGE_SVC: LoadBalancerConfiguration = {
  name: "edge",
  primaryVMSet: "pool-e",
  serviceLabelSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["edge"] }] },
};
const CLOSED: LoadBalancerConfiguration = {
  name: "closed",
  primaryVMSet: "pool-x",
  allowServicePlacement: false,
};

function place(configurations: LoadBalancerConfiguration[], over: Partial<PlacementInput> = {}) {
  return placeService({ configurations, serviceLabels: {}, namespaceLabels: {}, rules: new Map(), ...over });
}

const rules = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe("placeService: the order among eligible load balancers", () => {
  it("none made yet: the configuration's order, so the first Service goes on the first", () => {
    expect(place([K, B, C])).toEqual({ candidates: ["kubernetes", "lb-b", "lb-c"], staying: false });
  });

  it("fewest rules first; one not made yet counts as none", () => {
    expect(place([K, B, C], { rules: rules({ kubernetes: 3, "lb-b": 1 }) }).candidates).toEqual([
      "lb-c",
      "lb-b",
      "kubernetes",
    ]);
  });

  it("an existing empty load balancer before making another, as upstream prefers", () => {
    expect(place([K, B, C], { rules: rules({ kubernetes: 2, "lb-c": 0 }) }).candidates).toEqual([
      "lb-c",
      "lb-b",
      "kubernetes",
    ]);
  });

  it("ties go to the configuration's order, whatever order the counts come in", () => {
    expect(place([K, B, C], { rules: rules({ "lb-c": 2, "lb-b": 2, kubernetes: 2 }) }).candidates).toEqual([
      "kubernetes",
      "lb-b",
      "lb-c",
    ]);
  });

  it("the load balancer the Service is on, while eligible, is the only candidate however full it is", () => {
    expect(place([K, B], { current: "kubernetes", rules: rules({ kubernetes: 900, "lb-b": 0 }) })).toEqual({
      candidates: ["kubernetes"],
      staying: true,
    });
  });

  it("the current load balancer is matched whatever the case of its name", () => {
    expect(place([K, B], { current: "LB-B" })).toEqual({ candidates: ["lb-b"], staying: true });
  });

  it("a Service on a load balancer it is no longer eligible for is placed anew (a move it asked for)", () => {
    expect(place([K, B], { current: "kubernetes", requested: "lb-b" })).toEqual({
      candidates: ["lb-b"],
      staying: false,
    });
  });
});

describe("placeService: the annotation", () => {
  it("restricts the candidates to the load balancers it names, in the configuration's order", () => {
    expect(place([K, B, C], { requested: " lb-c , kubernetes " }).candidates).toEqual(["kubernetes", "lb-c"]);
  });

  it("names are matched whatever their case", () => {
    expect(place([K, B], { requested: "LB-B" }).candidates).toEqual(["lb-b"]);
  });

  it("an empty value is no annotation", () => {
    expect(place([K, B], { requested: " , " }).candidates).toEqual(["kubernetes", "lb-b"]);
  });

  it("a name that is not configured is refused, naming the annotation and the configured names", () => {
    const err = refusal(() => place([K, B], { requested: "kubernetes,lb-z" }));
    expect(err.reason).toBe("UnknownLoadBalancerConfiguration");
    expect(err.field).toBe(`metadata.annotations[${CONFIGURATIONS_ANNOTATION}]`);
    expect(err.message).toContain("lb-z is not a configured load balancer");
    expect(err.fix).toContain("kubernetes, lb-b");
  });

  it("without configurations, the annotation is refused with the fix", () => {
    const err = refusal(() => place([], { requested: "lb-b" }));
    expect(err.reason).toBe("UnknownLoadBalancerConfiguration");
    expect(err.fix).toContain("configure multipleStandardLoadBalancerConfigurations");
  });

  it("naming a load balancer with allowServicePlacement false places on it, as AKS documents", () => {
    expect(place([K, CLOSED], { requested: "closed" }).candidates).toEqual(["closed"]);
  });

  it("naming a load balancer whose selectors do not match the Service is refused, saying why", () => {
    const err = refusal(() => place([K, TEAM_NS], { requested: "team", namespaceLabels: { team: "red" } }));
    expect(err.reason).toBe("NoEligibleLoadBalancer");
    expect(err.field).toBe(`metadata.annotations[${CONFIGURATIONS_ANNOTATION}]`);
    expect(err.message).toContain("team (serviceNamespaceSelector does not match the namespace's labels)");
  });
});

describe("placeService: allowServicePlacement", () => {
  it("false keeps new Services off", () => {
    expect(place([K, CLOSED]).candidates).toEqual(["kubernetes"]);
  });

  it("false keeps the Services already on it there", () => {
    expect(place([K, CLOSED], { current: "closed" })).toEqual({ candidates: ["closed"], staying: true });
  });

  it("a Service no load balancer is open to is refused, naming each one's reason", () => {
    const err = refusal(() => place([CLOSED]));
    expect(err.reason).toBe("NoEligibleLoadBalancer");
    // The Service names no load balancer and has no labels: the configurations' rules left it nowhere.
    expect(err.field).toBe("multipleStandardLoadBalancerConfigurations (controller Azure config)");
    expect(err.message).toContain("closed (allowServicePlacement is false)");
  });
});

describe("placeService: selectors", () => {
  it("a namespace selector that matches makes its load balancer the only choice over those without selectors", () => {
    expect(place([K, TEAM_NS, B], { namespaceLabels: { team: "blue" } }).candidates).toEqual(["team"]);
  });

  it("a namespace selector that does not match leaves the Service to the load balancers without selectors", () => {
    expect(place([K, TEAM_NS, B], { namespaceLabels: { team: "red" } }).candidates).toEqual([
      "kubernetes",
      "lb-b",
    ]);
  });

  it("a Service label selector is matched against the Service's labels, not the namespace's", () => {
    expect(place([K, EDGE_SVC], { serviceLabels: { tier: "edge" } }).candidates).toEqual(["edge"]);
    expect(place([K, EDGE_SVC], { namespaceLabels: { tier: "edge" } }).candidates).toEqual(["kubernetes"]);
  });

  it("several matching selectors: all those load balancers, fewest rules first", () => {
    const input = { serviceLabels: { tier: "edge" }, namespaceLabels: { team: "blue" } };
    expect(
      place([K, TEAM_NS, EDGE_SVC], { ...input, rules: rules({ team: 5, edge: 2 }) }).candidates,
    ).toEqual(["edge", "team"]);
  });

  it("both selectors on one load balancer must match", () => {
    const both: LoadBalancerConfiguration = {
      ...TEAM_NS,
      name: "both",
      serviceLabelSelector: { matchLabels: { tier: "edge" } },
    };
    expect(place([K, both], { namespaceLabels: { team: "blue" } }).candidates).toEqual(["kubernetes"]);
    expect(
      place([K, both], { namespaceLabels: { team: "blue" }, serviceLabels: { tier: "edge" } }).candidates,
    ).toEqual(["both"]);
  });

  it("a load balancer that matches the Service's labels but not its namespace's has not chosen it", () => {
    const both: LoadBalancerConfiguration = {
      ...TEAM_NS,
      name: "both",
      serviceLabelSelector: { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["edge"] }] },
    };
    expect(place([K, both, EDGE_SVC]).candidates).toEqual(["kubernetes"]);
  });

  it("a Service whose labels stop matching its load balancer's selector moves (its labels asked)", () => {
    expect(place([K, TEAM_NS], { current: "team", namespaceLabels: {} })).toEqual({
      candidates: ["kubernetes"],
      staying: false,
    });
  });

  it("a Service on a load balancer without selectors moves when a selector comes to match it", () => {
    expect(place([K, TEAM_NS], { current: "kubernetes", namespaceLabels: { team: "blue" } })).toEqual({
      candidates: ["team"],
      staying: false,
    });
  });

  it("only selective load balancers, none matching: refused, naming each and the fix", () => {
    const err = refusal(() => place([TEAM_NS, EDGE_SVC]));
    expect(err.reason).toBe("NoEligibleLoadBalancer");
    expect(err.message).toContain("team (serviceNamespaceSelector");
    expect(err.message).toContain("edge (serviceLabelSelector");
    expect(err.fix).toContain("multipleStandardLoadBalancerConfigurations");
  });
});

describe("placeService: determinism", () => {
  it("the same input gives the same answer, whatever the order of the rule counts", () => {
    const a = place([K, B, C, TEAM_NS], {
      rules: new Map([
        ["lb-b", 1],
        ["kubernetes", 1],
      ]),
    });
    const b = place([K, B, C, TEAM_NS], {
      rules: new Map([
        ["kubernetes", 1],
        ["lb-b", 1],
      ]),
    });
    expect(a).toEqual(b);
    expect(a.candidates).toEqual(["lb-c", "kubernetes", "lb-b"]);
  });
});
