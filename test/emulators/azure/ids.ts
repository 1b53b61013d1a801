// ARM resource IDs: built with ARM's canonical casing, compared case-insensitively (as ARM does), and parsed back
// into their parts when a request body references another resource.
import { invalidResourceName, linkedInvalidPropertyId } from "./errors.ts";

export const NETWORK = "Microsoft.Network";

/** Network resource types the emulator serves, in ARM's casing, keyed by their lower-case form. */
export const TOP_LEVEL_TYPES = {
  loadbalancers: "loadBalancers",
  publicipaddresses: "publicIPAddresses",
  publicipprefixes: "publicIPPrefixes",
  virtualnetworks: "virtualNetworks",
  networksecuritygroups: "networkSecurityGroups",
} as const;

export type TopLevelType = (typeof TOP_LEVEL_TYPES)[keyof typeof TOP_LEVEL_TYPES];

export function canonicalTopLevelType(segment: string): TopLevelType | undefined {
  return (TOP_LEVEL_TYPES as Record<string, TopLevelType>)[segment.toLowerCase()];
}

/** The key under which a resource is stored: ARM IDs are case-insensitive. */
export const idKey = (id: string): string => id.toLowerCase();

export const sameId = (a: string | undefined, b: string | undefined): boolean =>
  a !== undefined && b !== undefined && idKey(a) === idKey(b);

export function resourceGroupId(subscriptionId: string, resourceGroup: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
}

export function resourceId(
  subscriptionId: string,
  resourceGroup: string,
  type: TopLevelType,
  name: string,
): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${NETWORK}/${type}/${name}`;
}

export const childId = (parentId: string, childType: string, name: string): string =>
  `${parentId}/${childType}/${name}`;

/** The parts of a Microsoft.Network resource ID, or of one of its children. */
export interface ParsedId {
  subscriptionId: string;
  resourceGroup: string;
  type: TopLevelType;
  name: string;
  parentId: string;
  child?: { type: string; name: string };
}

/** Parses a Microsoft.Network ID; undefined when the ID is well formed but names something else. */
export function parseNetworkId(id: string): ParsedId | undefined {
  const m =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Network\/([^/]+)\/([^/]+)(?:\/([^/]+)\/([^/]+))?$/i.exec(
      id,
    );
  if (!m) return undefined;
  const type = canonicalTopLevelType(m[3]!);
  if (!type) return undefined;
  const parsed: ParsedId = {
    subscriptionId: m[1]!,
    resourceGroup: m[2]!,
    type,
    name: m[4]!,
    parentId: resourceId(m[1]!, m[2]!, type, m[4]!),
  };
  if (m[5] !== undefined) parsed.child = { type: m[5], name: m[6]! };
  return parsed;
}

/** ARM rejects a reference that is not a fully qualified resource ID before anything else looks at it. */
export function assertQualifiedId(value: string, path: string): void {
  if (!/^\/subscriptions\/[^/]+\/|^\/providers\/[^/]+\//i.test(value))
    throw linkedInvalidPropertyId(value, path);
}

/** Names of Microsoft.Network resources and of their children: 1-80 characters, word characters, `.`, `-`, `_`. */
export function assertValidName(name: string): void {
  if (!/^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,78}[A-Za-z0-9_])?$/.test(name)) throw invalidResourceName(name);
}

/** ARM accepts display names ("East US") and answers with the normalised form ("eastus"). */
export const normalizeLocation = (location: string): string => location.replace(/\s+/g, "").toLowerCase();
