// Portico's own public IP shared by several Services, reference-counted in its tags. The Service it was made for
// owns it (portico.io-service-uid); the others that name it (azure-pip-name, or its address) are listed in
// portico.io-shared-with, as cloud-provider-azure lists a public IP's Services in its k8s-azure-service tag.
// A Service that leaves takes itself off the list; the owner leaving hands the public IP to a Service still on
// the list; it is deleted only when nobody is left. Pure: decides the operations from the observation.
import { ConfigurationError } from "../../errors.ts";
import type { Observed, PublicIPAddress } from "../model.ts";
import { frontendName, TAG } from "../names.ts";
import { recordTag } from "../loadBalancerEdit.ts";

/** UIDs are 36 characters, and a tag value holds at most 256: six sharers besides the owner. */
export const MAX_SHARERS = 6;

export type SharingOperation =
  | { kind: "sharePublicIp"; name: string; resourceGroup: string; uid: string; join: boolean }
  | {
      kind: "handOverPublicIp";
      name: string;
      resourceGroup: string;
      from: string;
      to: string;
      /** `namespace/name` of the new owner, as its load balancer record tag has it. */
      toService?: string;
    };

export function sharersOf(pip: PublicIPAddress): string[] {
  return (pip.tags?.[TAG.sharedWith] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Refuses a Service joining a public IP whose list is full. */
export function assertRoomToShare(pip: PublicIPAddress, uid: string, field: string): void {
  const sharers = sharersOf(pip);
  if (!sharers.includes(uid) && sharers.length >= MAX_SHARERS)
    throw new ConfigurationError(
      "PublicIPShareLimit",
      field,
      `public IP ${pip.name} is already shared by ${MAX_SHARERS + 1} Services, all its tags can record`,
      "create a Standard static public IP yourself for a wider sharing, or use another public IP",
    );
}

const where = (pip: PublicIPAddress) => ({
  name: pip.name ?? "",
  resourceGroup: pip.id?.match(/\/resourceGroups\/([^/]+)/i)?.[1] ?? "",
});

/**
 * What the Service `uid` leaving public IP `pip` (one of this cluster's, owned or shared) takes: off the list,
 * the public IP handed over, or deleted (undefined: the caller deletes it).
 */
export function leaving(
  pip: PublicIPAddress,
  uid: string,
  observed: Observed,
): SharingOperation | "delete" | undefined {
  const sharers = sharersOf(pip);
  if (pip.tags?.[TAG.serviceUid] !== uid)
    return sharers.includes(uid) ? { kind: "sharePublicIp", ...where(pip), uid, join: false } : undefined;
  const heir = sharers[0];
  if (!heir) return "delete";
  // The heir's frontend of the public IP's family records its name (names.ts).
  const tag = recordTag(frontendName(heir, pip.publicIPAddressVersion === "IPv6" ? "IPv6" : "IPv4"));
  const toService = observed.loadBalancers.map((lb) => lb.tags?.[tag]).find((v) => v !== undefined);
  return {
    kind: "handOverPublicIp",
    ...where(pip),
    from: uid,
    to: heir,
    ...(toService ? { toService } : {}),
  };
}

/** The tags after a sharing operation, from the tags as read now (so a concurrent change is not lost). */
export function tagsAfter(op: SharingOperation, tags: Record<string, string>): Record<string, string> {
  const next = { ...tags };
  const list = sharersOf({ tags });
  const setList = (uids: string[]) => {
    if (uids.length) next[TAG.sharedWith] = uids.join(",");
    else delete next[TAG.sharedWith];
  };
  if (op.kind === "sharePublicIp") {
    setList(op.join ? [...new Set([...list, op.uid])] : list.filter((u) => u !== op.uid));
    return next;
  }
  // Handed over only if it is still the leaving Service's and the heir is still on the list.
  if (next[TAG.serviceUid] !== op.from || !list.includes(op.to)) return tags;
  next[TAG.serviceUid] = op.to;
  if (op.toService) next[TAG.service] = op.toService;
  else delete next[TAG.service];
  setList(list.filter((u) => u !== op.to));
  return next;
}
