// Who references what, kept up to date from each write instead of recomputed by scanning the store: every
// frontend's public IP or subnet, and every subnet's security group. ARM's read-only back-references
// (publicIPAddress.ipConfiguration, subnet.ipConfigurations, networkSecurityGroup.subnets) and its in-use checks
// are answered from here, so a large subscription costs each request what it touches, not what exists.
//
// The index is derived only from what the store holds: `Store.put` replaces a resource's entries with those of
// its new version (the diff of the write), `Store.delete` drops them. Stored resources' references are never
// changed in place (a write always puts a new object), so the index cannot drift from the resources.
import { childId, idKey } from "./ids.ts";
import type { FrontendIpConfiguration, NetworkResource } from "./model.ts";

export type ReferenceKind = "frontendPublicIp" | "frontendSubnet" | "subnetNsg";

export interface Reference {
  kind: ReferenceKind;
  /** The referencing child's ID, as ARM shows it. */
  fromId: string;
  /** The resource that holds the referencing child. */
  ownerKey: string;
  /** Position of the child in its owner's list, so answers keep the order a scan of the store would give. */
  position: number;
  /** The referencing frontend, for frontend references. */
  frontend?: FrontendIpConfiguration;
}

function referencesOf(r: NetworkResource): { target: string; ref: Reference }[] {
  const ownerKey = idKey(r.id);
  const out: { target: string; ref: Reference }[] = [];
  if (r.type === "loadBalancers")
    r.properties.frontendIPConfigurations.forEach((frontend, position) => {
      const fromId = childId(r.id, "frontendIPConfigurations", frontend.name);
      const base = { fromId, ownerKey, position, frontend };
      if (frontend.publicIPAddressId)
        out.push({ target: idKey(frontend.publicIPAddressId), ref: { kind: "frontendPublicIp", ...base } });
      if (frontend.subnetId)
        out.push({ target: idKey(frontend.subnetId), ref: { kind: "frontendSubnet", ...base } });
    });
  if (r.type === "virtualNetworks")
    r.properties.subnets.forEach((subnet, position) => {
      if (subnet.networkSecurityGroupId)
        out.push({
          target: idKey(subnet.networkSecurityGroupId),
          ref: { kind: "subnetNsg", fromId: childId(r.id, "subnets", subnet.name), ownerKey, position },
        });
    });
  return out;
}

export class BackReferences {
  /** `kind|target key` → referencing child's key → reference. */
  private readonly byTarget = new Map<string, Map<string, Reference>>();
  /** Resource key → the `kind|target key` entries its references are filed under. */
  private readonly byOwner = new Map<string, { slot: string; from: string }[]>();

  clear(): void {
    this.byTarget.clear();
    this.byOwner.clear();
  }

  /** Files `r`'s references in place of those of the version it replaces. */
  put(r: NetworkResource): void {
    this.remove(r.id);
    const filed: { slot: string; from: string }[] = [];
    for (const { target, ref } of referencesOf(r)) {
      const slot = `${ref.kind}|${target}`;
      const from = idKey(ref.fromId);
      let refs = this.byTarget.get(slot);
      if (!refs) this.byTarget.set(slot, (refs = new Map<string, Reference>()));
      refs.set(from, ref);
      filed.push({ slot, from });
    }
    if (filed.length) this.byOwner.set(idKey(r.id), filed);
  }

  remove(id: string): void {
    const key = idKey(id);
    for (const { slot, from } of this.byOwner.get(key) ?? []) {
      const refs = this.byTarget.get(slot);
      refs?.delete(from);
      if (refs?.size === 0) this.byTarget.delete(slot);
    }
    this.byOwner.delete(key);
  }

  /** The references of `kind` to `targetId`, in the order of `ownerOrder` then of the owner's own list. */
  to(kind: ReferenceKind, targetId: string, ownerOrder: (ownerKey: string) => number): Reference[] {
    const refs = this.byTarget.get(`${kind}|${idKey(targetId)}`);
    if (!refs) return [];
    const list = [...refs.values()];
    if (list.length > 1)
      list.sort((a, b) => ownerOrder(a.ownerKey) - ownerOrder(b.ownerKey) || a.position - b.position);
    return list;
  }
}
