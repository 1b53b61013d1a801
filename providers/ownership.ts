// The ownership record every provider writes on what it creates: the cluster, the Service by name, the
// Service's UID (what observation filters on) and the kind of resource. Tag names differ per cloud (ARM
// refuses "/" in tag names), so each provider passes its own.
import type { ServiceRef } from "./provider.ts";

export interface OwnershipTagNames {
  cluster: string;
  service: string;
  serviceUid: string;
  resource: string;
}

export function ownershipTags(
  names: OwnershipTagNames,
  cluster: string,
  service: ServiceRef,
  resource: string,
): Record<string, string> {
  return {
    [names.cluster]: cluster,
    [names.service]: `${service.namespace}/${service.name}`,
    [names.serviceUid]: service.uid,
    [names.resource]: resource,
  };
}
