// Recognises ARM URLs. Path segments that ARM treats case-insensitively (resourceGroups, providers, namespaces,
// types) are matched that way; names keep the casing the client used.
import { invalidResourceNamespace, invalidResourceType } from "./errors.ts";
import { NETWORK, canonicalTopLevelType } from "./ids.ts";
import type { TopLevelType } from "./ids.ts";

export type Route =
  | { kind: "resourceGroups"; subscriptionId: string }
  | { kind: "resourceGroup"; subscriptionId: string; resourceGroup: string }
  | { kind: "resourceGroupOperation"; subscriptionId: string; operationId: string }
  | {
      kind: "networkOperation";
      subscriptionId: string;
      location: string;
      operationId: string;
      result: boolean;
    }
  | { kind: "networkList"; subscriptionId: string; resourceGroup?: string; type: TopLevelType }
  | {
      kind: "network";
      subscriptionId: string;
      resourceGroup: string;
      type: TopLevelType;
      name: string;
      /** `action`: a POST to a child's operation, e.g. loadBalancingRules/{rule}/health. */
      child?: { segment: string; name?: string; action?: string };
    };

/** The route for `path`, undefined for paths ARM does not serve; throws ARM's errors for unknown providers/types. */
export function route(path: string, apiVersion: string): Route | undefined {
  const s = path.split("/").filter(Boolean).map(decodeURIComponent);
  const is = (i: number, word: string): boolean => s[i]?.toLowerCase() === word.toLowerCase();
  if (!is(0, "subscriptions") || s[1] === undefined) return undefined;
  const subscriptionId = s[1];
  if (s.length === 3 && is(2, "resourcegroups")) return { kind: "resourceGroups", subscriptionId };
  if (s.length === 4 && is(2, "resourcegroups"))
    return { kind: "resourceGroup", subscriptionId, resourceGroup: s[3]! };
  if (s.length === 4 && is(2, "operationresults"))
    return { kind: "resourceGroupOperation", subscriptionId, operationId: s[3]! };
  // /subscriptions/{sub}/providers/Microsoft.Network/...
  if (is(2, "providers")) {
    assertNetwork(s[3], apiVersion, s[4]);
    if (s.length === 8 && is(4, "locations") && (is(6, "operations") || is(6, "operationresults")))
      return {
        kind: "networkOperation",
        subscriptionId,
        location: s[5]!,
        operationId: s[7]!,
        result: is(6, "operationresults"),
      };
    if (s.length === 5) return { kind: "networkList", subscriptionId, type: topLevel(s[4]!, apiVersion) };
    return undefined;
  }
  // /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/{type}[/{name}[/{child}[/{childName}[/{action}]]]]
  if (!is(2, "resourcegroups") || !is(4, "providers") || s.length < 7 || s.length > 11) return undefined;
  assertNetwork(s[5], apiVersion, s[6]);
  const resourceGroup = s[3]!;
  const type = topLevel(s[6]!, apiVersion);
  if (s.length === 7) return { kind: "networkList", subscriptionId, resourceGroup, type };
  const base = { kind: "network" as const, subscriptionId, resourceGroup, type, name: s[7]! };
  if (s.length === 8) return base;
  if (s.length === 11) return { ...base, child: { segment: s[8]!, name: s[9]!, action: s[10]! } };
  return { ...base, child: s.length === 10 ? { segment: s[8]!, name: s[9]! } : { segment: s[8]! } };
}

function assertNetwork(namespace: string | undefined, apiVersion: string, type: string | undefined): void {
  if (namespace === undefined) return;
  if (namespace.toLowerCase() !== NETWORK.toLowerCase()) {
    if (namespace.toLowerCase() === "microsoft.resources")
      throw invalidResourceType(type ?? "", namespace, apiVersion);
    throw invalidResourceNamespace(namespace);
  }
}

function topLevel(segment: string, apiVersion: string): TopLevelType {
  const type = canonicalTopLevelType(segment);
  if (!type) throw invalidResourceType(segment, NETWORK, apiVersion);
  return type;
}
