// The Azure role definition in manifests/ grants exactly the actions the Azure provider needs: an action for
// every ARM operation it calls (read for get and list, write for createOrUpdate and updateTags, delete for
// delete), the linked-access joins its load balancers' references cause, and reading its long-running
// operations; nothing more.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "../../harness/index.ts";
import { MANIFESTS } from "../../harness/manifests.ts";

const providerDir = join(import.meta.dirname, "..", "..", "..", "providers", "azure");
const ACTION_OF_METHOD: Record<string, string> = {
  get: "read",
  list: "read",
  listAll: "read",
  createOrUpdate: "write",
  beginCreateOrUpdate: "write",
  beginCreateOrUpdateAndWait: "write",
  updateTags: "write",
  delete: "delete",
  beginDelete: "delete",
  beginDeleteAndWait: "delete",
};
/** ARM checks these on the referenced resource when a load balancer refers to it. */
const JOINS: { reference: RegExp; action: string }[] = [
  { reference: /publicIPAddress: \{ id:/, action: "Microsoft.Network/publicIPAddresses/join/action" },
  { reference: /publicIPPrefix: \{ id:/, action: "Microsoft.Network/publicIPPrefixes/join/action" },
  { reference: /subnet: \{ id:/, action: "Microsoft.Network/virtualNetworks/subnets/join/action" },
  {
    reference: /virtualNetwork: \{ id:/,
    action: "Microsoft.Network/virtualNetworks/joinLoadBalancer/action",
  },
];
/** Polling an asynchronous operation (Azure-AsyncOperation and Location headers). */
const POLLING = [
  "Microsoft.Network/locations/operations/read",
  "Microsoft.Network/locations/operationResults/read",
];

function actionsNeeded(): string[] {
  // Every source file of the provider, in its subfolders too.
  const sources = readdirSync(providerDir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => readFileSync(join(providerDir, f), "utf8"));
  const actions = new Set<string>();
  for (const source of sources) {
    // `clients.network.loadBalancers.get(...)`, and `const lbs = clients.network.loadBalancers; lbs.get(...)`.
    const aliases = new Map<string, string>();
    for (const [, alias, collection] of source.matchAll(/const (\w+) = (?:\w+\.)*clients\.network\.(\w+);/g))
      aliases.set(alias!, collection!);
    const calls = [
      ...[...source.matchAll(/clients\.network\.(\w+)\.(\w+)\(/g)].map(([, c, m]) => [c!, m!] as const),
      ...[...aliases].flatMap(([alias, collection]) =>
        [...source.matchAll(new RegExp(`\\b${alias}\\.(\\w+)\\(`, "g"))].map(
          ([, m]) => [collection, m!] as const,
        ),
      ),
    ];
    for (const [collection, method] of calls) {
      const verb = ACTION_OF_METHOD[method];
      if (!verb) throw new Error(`providers/azure calls ${collection}.${method}: add it to ACTION_OF_METHOD`);
      actions.add(`Microsoft.Network/${collection}/${verb}`);
    }
    for (const join of JOINS) if (join.reference.test(source)) actions.add(join.action);
  }
  if (actions.size) POLLING.forEach((a) => actions.add(a));
  return [...actions].sort();
}

test("the Azure role definition grants exactly the actions the provider needs", () => {
  const role = JSON.parse(readFileSync(join(MANIFESTS, "azure", "role-definition.json"), "utf8")) as {
    IsCustom: boolean;
    Actions: string[];
    NotActions: string[];
    DataActions: string[];
    AssignableScopes: string[];
  };
  const needed = actionsNeeded();
  expect(needed).toContain("Microsoft.Network/loadBalancers/write");
  expect([...role.Actions].sort()).toEqual(needed);
  expect(role).toMatchObject({ IsCustom: true, NotActions: [], DataActions: [] });
  expect(role.AssignableScopes.length).toBeGreaterThan(0);
});
