import { describe, expect, it } from "vitest";
import { AzureConfigError, parseAzureConfig } from "../config.ts";
import { checkList, configurationOf, parseLoadBalancerConfigurations } from "./lbConfigurations.ts";
import { AzureProvider } from "../provider.ts";

const base = {
  subscriptionId: "s",
  resourceGroup: "rg",
  location: "eastus",
  vnetName: "vnet",
  subnetName: "nodes",
};

/** The example of cloud-provider-azure's documentation, with AKS's field name on the second entry. */
const upstream = [
  { name: "kubernetes", primaryVMSet: "vmss-0", allowServicePlacement: true },
  {
    name: "lb-2",
    allowServicePlacement: false,
    serviceNamespaceSelector: { matchExpressions: [{ key: "key1", operator: "In", values: ["val1"] }] },
    nodeSelector: { matchLabels: { key1: "val1" } },
    primaryAgentPoolName: "pool1",
    // cloud-provider-azure's own status, written back into the same entries.
    activeServices: ["ns/svc"],
  },
];

function configError(raw: unknown): string {
  try {
    parseAzureConfig({ ...base, multipleStandardLoadBalancerConfigurations: raw });
  } catch (err) {
    if (err instanceof AzureConfigError) return err.message;
    throw err;
  }
  throw new Error("expected an AzureConfigError");
}

describe("multipleStandardLoadBalancerConfigurations in azure.json", () => {
  it("reads cloud-provider-azure's entries with their field names", () => {
    expect(
      parseAzureConfig({ ...base, multipleStandardLoadBalancerConfigurations: upstream })
        .multipleStandardLoadBalancerConfigurations,
    ).toEqual([
      { name: "kubernetes", primaryVMSet: "vmss-0", allowServicePlacement: true },
      {
        name: "lb-2",
        primaryAgentPoolName: "pool1",
        allowServicePlacement: false,
        serviceNamespaceSelector: { matchExpressions: [{ key: "key1", operator: "In", values: ["val1"] }] },
        nodeSelector: { matchLabels: { key1: "val1" } },
      },
    ]);
  });

  it("absent, null or empty: one shared load balancer, as before", () => {
    expect(parseAzureConfig(base).multipleStandardLoadBalancerConfigurations).toBeUndefined();
    for (const raw of [null, []])
      expect(
        parseAzureConfig({ ...base, multipleStandardLoadBalancerConfigurations: raw })
          .multipleStandardLoadBalancerConfigurations,
      ).toBeUndefined();
  });

  it.each([
    ["not a list", { name: "x" }, "must be a list"],
    ["an entry not an object", ["x"], '[0]" must be an object'],
    ["a name ARM refuses", [{ name: "-bad", primaryVMSet: "a" }], '[0].name" must be a load balancer name'],
    ["no name", [{ primaryVMSet: "a" }], '[0].name" must be a load balancer name'],
    [
      "a flag not a boolean",
      [{ name: "a", primaryVMSet: "a", allowServicePlacement: "no" }],
      'allowServicePlacement" must be true or false',
    ],
    ["a pool not a string", [{ name: "a", primaryVMSet: 3 }], '[0].primaryVMSet" must be a string'],
    [
      "a selector of the wrong shape",
      [{ name: "a", primaryVMSet: "a", nodeSelector: { key1: "v" } }],
      'nodeSelector".key1 is not a selector field',
    ],
    [
      "an operator Kubernetes has not",
      [
        {
          name: "a",
          primaryVMSet: "a",
          serviceLabelSelector: { matchExpressions: [{ key: "k", operator: "Is" }] },
        },
      ],
      "operator must be one of In, NotIn, Exists, DoesNotExist",
    ],
    [
      "a field Portico does not read",
      [{ name: "a", primaryVMSet: "a", autoPlaceServices: true }],
      '[0].autoPlaceServices" is not a field Portico reads',
    ],
    ["no primary pool", [{ name: "a" }], '[0]" needs "primaryVMSet"'],
    [
      "a name twice",
      [
        { name: "a", primaryVMSet: "x" },
        { name: "A", primaryVMSet: "y" },
      ],
      '[1].name" A is used twice',
    ],
    [
      "a pool primary twice",
      [
        { name: "a", primaryVMSet: "x" },
        { name: "b", primaryVMSet: "X" },
      ],
      "X is already the primary pool of a",
    ],
  ])("refuses %s, naming the field", (_, raw, text) => {
    const message = configError(raw);
    expect(message).toContain("multipleStandardLoadBalancerConfigurations");
    expect(message).toContain(text);
  });

  it("refuses it with loadBalancerPerService, which gives every Service its own", () => {
    expect(() =>
      parseAzureConfig({
        ...base,
        loadBalancerPerService: true,
        multipleStandardLoadBalancerConfigurations: upstream,
      }),
    ).toThrow(/set one of them/);
  });
});

describe("checkList with the cluster's load balancer", () => {
  const configs = parseLoadBalancerConfigurations(upstream).configurations;

  it("passes when one entry is the cluster's load balancer, whatever the case", () => {
    expect(checkList(configs, "Kubernetes")).toEqual([]);
  });

  it("asks for an entry named after the cluster's load balancer, so the Services on it stay", () => {
    expect(checkList(configs, "prod")).toEqual([
      expect.stringContaining("has no entry named prod, the cluster's load balancer"),
    ]);
  });
});

describe("configurationOf", () => {
  const configs = parseLoadBalancerConfigurations(upstream).configurations;
  it("finds the entry of a public or internal load balancer, and none for others", () => {
    expect(configurationOf(configs, "LB-2")?.name).toBe("lb-2");
    expect(configurationOf(configs, "lb-2-internal")?.name).toBe("lb-2");
    expect(configurationOf(configs, "lb-3")).toBeUndefined();
    expect(configurationOf(configs, undefined)).toBeUndefined();
  });
});

describe("the provider's check of the configurations it is given", () => {
  // Settings handed over without the file (embedding, tests) are checked the same, with the cluster's name.
  const provider = (configs: unknown, extra: object = {}) =>
    new AzureProvider({
      clusterName: "prod",
      ...base,
      ...extra,
      multipleStandardLoadBalancerConfigurations: configs as never,
      credential: { getToken: () => Promise.resolve(null) },
    });

  it("takes a list with an entry for the cluster's load balancer", () => {
    expect(provider([{ name: "prod", primaryVMSet: "a" }]).name).toBe("azure");
    expect(provider([{ name: "main", primaryVMSet: "a" }], { loadBalancerName: "main" }).name).toBe("azure");
  });

  it("refuses one without it, one with a bad entry, and one with loadBalancerPerService", () => {
    expect(() => provider([{ name: "other", primaryVMSet: "a" }])).toThrow(/no entry named prod/);
    expect(() => provider([{ name: "prod" }])).toThrow(/needs "primaryVMSet"/);
    expect(() => provider([{ name: "prod", primaryVMSet: "a" }], { loadBalancerPerService: true })).toThrow(
      /"loadBalancerPerService" cannot be combined/,
    );
  });
});
