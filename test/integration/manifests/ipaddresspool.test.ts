// The IPAddressPool CRD of the metal overlay, installed on the real apiserver: well-formed pools (the
// examples among them) are accepted with their defaults, and malformed ones are refused by the apiserver
// itself, with a message that says what is wrong, before any controller sees them.
import { CustomObjectsApi, loadAllYaml, type KubernetesObject } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test, type TestCluster } from "../../harness/index.ts";
import { apiError, installCrds, MANIFESTS, renderOverlay } from "../../harness/manifests.ts";
import { mergePatch } from "../../harness/index.ts";

const POOLS = { group: "portico.io", version: "v1alpha1", plural: "ipaddresspools" } as const;

interface Pool extends KubernetesObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

async function poolApi(cluster: TestCluster): Promise<CustomObjectsApi> {
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  return cluster.kubeConfig.makeApiClient(CustomObjectsApi);
}

/**
 * Creates the pool as a dry run with strict field validation, as `kubectl apply` sends it: validated in full,
 * stored never (pools are cluster-wide and tests run in parallel).
 */
async function tryCreate(
  api: CustomObjectsApi,
  spec: unknown,
): Promise<{ ok: true; pool: Pool } | { ok: false; code: number | undefined; message: string }> {
  const body = {
    apiVersion: "portico.io/v1alpha1",
    kind: "IPAddressPool",
    metadata: { name: `pool-${randomBytes(4).toString("hex")}` },
    ...(spec === undefined ? {} : { spec }),
  };
  try {
    const pool = (await api.createClusterCustomObject({
      ...POOLS,
      body,
      dryRun: "All",
      fieldValidation: "Strict",
    })) as Pool;
    return { ok: true, pool };
  } catch (err) {
    return { ok: false, ...apiError(err) };
  }
}

test("well-formed pools are accepted, with autoAssign and avoidBuggyIPs defaulted", async ({ cluster }) => {
  const api = await poolApi(cluster);
  const examples = loadAllYaml(
    readFileSync(join(MANIFESTS, "examples", "ipaddresspool.yaml"), "utf8"),
  ) as Pool[];
  expect(examples.length).toBeGreaterThan(0);
  for (const example of examples) {
    const created = await tryCreate(api, example.spec);
    expect(created, example.metadata!.name).toMatchObject({ ok: true });
  }

  const minimal = await tryCreate(api, { addresses: ["192.0.2.0/24"] });
  expect(minimal).toMatchObject({ ok: true, pool: { spec: { autoAssign: true, avoidBuggyIPs: false } } });

  const everything = await tryCreate(api, {
    addresses: [
      "192.0.2.0/24",
      "198.51.100.10-198.51.100.20",
      "203.0.113.7 - 203.0.113.9",
      "203.0.113.200/32",
      "2001:db8::/64",
      "2001:db8:1::10-2001:db8:1::ff",
    ],
    autoAssign: false,
    avoidBuggyIPs: true,
    serviceAllocation: {
      priority: 10,
      namespaces: ["default", "web"],
      namespaceSelectors: [{ matchLabels: { team: "web" } }],
      serviceSelectors: [
        { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["shop"] }] },
        { matchExpressions: [{ key: "internal", operator: "DoesNotExist" }] },
      ],
    },
    nodeSelectors: [{ matchLabels: { "node-role.kubernetes.io/edge": "" } }],
  });
  expect(everything).toMatchObject({ ok: true, pool: { spec: { autoAssign: false, avoidBuggyIPs: true } } });
});

test("malformed pools are refused by the apiserver with what is wrong", async ({ cluster }) => {
  const api = await poolApi(cluster);
  const cases: { spec: unknown; code: number; message: RegExp }[] = [
    {
      spec: { addresses: ["192.0.2.7"] },
      code: 422,
      message: /spec\.addresses\[0\].*"192\.0\.2\.7" is neither a CIDR .* nor a first-last range/,
    },
    {
      spec: { addresses: ["192.0.2.0/24", "not-an-address"] },
      code: 422,
      message: /spec\.addresses\[1\].*"not-an-address" is neither a CIDR/,
    },
    { spec: { addresses: ["192.0.2.300/24"] }, code: 422, message: /is neither a CIDR/ },
    { spec: { addresses: ["192.0.2.1-192.0.2.5-192.0.2.9"] }, code: 422, message: /is neither a CIDR/ },
    {
      spec: { addresses: ["192.0.2.10-2001:db8::1"] },
      code: 422,
      message: /"192\.0\.2\.10-2001:db8::1" mixes IPv4 and IPv6/,
    },
    { spec: { addresses: [] }, code: 422, message: /spec\.addresses.*should have at least 1 items/ },
    { spec: {}, code: 422, message: /spec\.addresses: Required value/ },
    { spec: undefined, code: 422, message: /spec: Required value/ },
    {
      spec: { addresses: ["192.0.2.0/24", "192.0.2.0/24"] },
      code: 422,
      message: /spec\.addresses\[1\]: Duplicate value: "192\.0\.2\.0\/24"/,
    },
    {
      spec: { addresses: ["192.0.2.0/24"], autoAssign: "yes" },
      code: 422,
      message: /spec\.autoAssign: Invalid value: "string": spec\.autoAssign in body must be of type boolean/,
    },
    {
      spec: { addresses: ["192.0.2.0/24"], serviceAllocation: { priority: 1.5 } },
      code: 422,
      message: /spec\.serviceAllocation\.priority.*must be of type integer/,
    },
    {
      spec: { addresses: ["192.0.2.0/24"], serviceAllocation: { namespaces: ["Not_A_Namespace"] } },
      code: 422,
      message: /spec\.serviceAllocation\.namespaces\[0\].*should match/,
    },
    {
      spec: {
        addresses: ["192.0.2.0/24"],
        nodeSelectors: [{ matchExpressions: [{ key: "rack", operator: "In" }] }],
      },
      code: 422,
      message: /spec\.nodeSelectors\[0\]\.matchExpressions\[0\].*values must list at least one value for In/,
    },
    {
      spec: {
        addresses: ["192.0.2.0/24"],
        serviceAllocation: {
          serviceSelectors: [{ matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] }],
        },
      },
      code: 422,
      message: /serviceSelectors\[0\]\.matchExpressions\[0\].*must be empty for Exists/,
    },
    {
      spec: {
        addresses: ["192.0.2.0/24"],
        serviceAllocation: { namespaceSelectors: [{ matchExpressions: [{ key: "a", operator: "Equals" }] }] },
      },
      code: 422,
      message: /operator: Unsupported value: "Equals"/,
    },
    // kubectl validates strictly: a misspelt field is an error, not silently dropped.
    {
      spec: { addresses: ["192.0.2.0/24"], autoassign: false },
      code: 400,
      message: /unknown field "spec\.autoassign"/,
    },
  ];
  const outcomes = await Promise.all(cases.map((c) => tryCreate(api, c.spec)));
  outcomes.forEach((outcome, i) => {
    const { spec, code, message } = cases[i]!;
    expect(outcome, JSON.stringify(spec)).toMatchObject({
      ok: false,
      code,
      message: expect.stringMatching(message) as unknown,
    });
  });
});

test("the status holds the counts as decimal strings, which only the status subresource writes", async ({
  cluster,
}) => {
  const api = await poolApi(cluster);
  const name = `${cluster.namespace}-status`;
  await api.createClusterCustomObject({
    ...POOLS,
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "IPAddressPool",
      metadata: { name },
      spec: { addresses: ["2001:db8::/64"], serviceAllocation: { namespaces: [cluster.namespace] } },
    },
  });
  cluster.defer(() => api.deleteClusterCustomObject({ ...POOLS, name }).then(() => undefined));
  const status = (counts: Record<string, string>) => ({
    status: {
      ...counts,
      conditions: [
        {
          type: "Valid",
          status: "True",
          reason: "Valid",
          message: "the allocator uses this pool",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
  });
  // 2^64 addresses: more than any integer field holds.
  const written = (await api.patchClusterCustomObjectStatus(
    { ...POOLS, name, body: status({ assignedIPv6: "1", availableIPv6: "18446744073709551615" }) },
    mergePatch,
  )) as Pool;
  expect(written.status).toMatchObject({ assignedIPv6: "1", availableIPv6: "18446744073709551615" });

  const negative = await api
    .patchClusterCustomObjectStatus({ ...POOLS, name, body: status({ availableIPv4: "-1" }) }, mergePatch)
    .then(() => undefined, apiError);
  expect(negative).toMatchObject({
    code: 422,
    message: expect.stringMatching(/status\.availableIPv4.*should match/) as unknown,
  });

  // A write to the main resource leaves the status alone.
  const current = (await api.getClusterCustomObject({ ...POOLS, name })) as Pool;
  await api.replaceClusterCustomObject({
    ...POOLS,
    name,
    body: { ...current, status: { assignedIPv6: "99" } },
  });
  const after = (await api.getClusterCustomObject({ ...POOLS, name })) as Pool;
  expect(after.status).toMatchObject({ assignedIPv6: "1" });
});
