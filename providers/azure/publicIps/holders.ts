// Who the Services on a shared public IP's tags are (shared.ts), from the controller's view of the cluster: a
// Service that exists and is not being deleted may take the public IP over; one being deleted (deletionTimestamp
// set) still has to leave it; one that no longer exists never will. Names come from the view, else from the load
// balancers' record tags. Without a view (porticoctl), every Service counts as live, as the observation alone says.
import type { V1Service } from "@kubernetes/client-node";
import type { Observed } from "../model.ts";
import { observedHolders, type Holders } from "./shared.ts";

/** The cluster's Services, as the controller's cache lists them. */
export interface ServiceList {
  list(): readonly V1Service[];
}

export function clusterHolders(services: ServiceList | undefined, observed: Observed): Holders {
  const fromObservation = observedHolders(observed);
  if (!services) return fromObservation;
  // Indexed once per pass, when a shared public IP is left at all, and read at each decision.
  let byUid: Map<string, V1Service> | undefined;
  const find = (uid: string) => {
    byUid ??= new Map(services.list().map((s) => [s.metadata?.uid ?? "", s]));
    return byUid.get(uid);
  };
  return {
    state: (uid) => {
      const svc = find(uid);
      return !svc ? "gone" : svc.metadata?.deletionTimestamp ? "deleting" : "live";
    },
    name: (uid) => {
      const meta = find(uid)?.metadata;
      return meta?.namespace && meta.name ? `${meta.namespace}/${meta.name}` : fromObservation.name(uid);
    },
  };
}
