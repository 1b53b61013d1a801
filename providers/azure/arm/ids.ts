// ARM resource IDs: built the way ARM spells them, compared the way ARM compares them (case-insensitively).

export type NetworkType = "loadBalancers" | "publicIPAddresses" | "virtualNetworks" | "networkSecurityGroups";

export function resourceId(
  subscription: string,
  resourceGroup: string,
  type: NetworkType,
  name: string,
): string {
  return `/subscriptions/${subscription}/resourceGroups/${resourceGroup}/providers/Microsoft.Network/${type}/${name}`;
}

export function childId(parentId: string, segment: string, name: string): string {
  return `${parentId}/${segment}/${name}`;
}

export function sameId(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** The last segment of an ID: the resource's (or child's) name. */
export function nameOf(id: string | undefined): string | undefined {
  return id?.split("/").filter(Boolean).pop();
}

/** The resource group an ID names. */
export function resourceGroupOf(id: string | undefined): string | undefined {
  return id?.match(/\/resourceGroups\/([^/]+)/i)?.[1];
}
