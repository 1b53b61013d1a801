// What a provider reads of the cluster beyond the Service it is given: the controller's cache, through the part
// providers use (the cache implements it; porticoctl's one-off snapshot implements the listing part).
import type { KubernetesObject, V1Node, V1Service } from "@kubernetes/client-node";
import type { Announcement } from "../shared/bgpStatus.ts";

/** An IPAddressPool (Portico's or MetalLB's) as the cache holds it. */
export interface IPAddressPoolObject extends KubernetesObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}

export interface ClusterView {
  readonly services: {
    list(): readonly V1Service[];
    get?(name: string, namespace?: string): V1Service | undefined;
  };
  readonly nodes: { list(): readonly V1Node[] };
  /** Every Node, as the same array until one changes, where the view keeps one. */
  allNodes?(): readonly V1Node[];
  /** Portico's IPAddressPools, where watched (bare metal). */
  readonly pools?: { list(): readonly IPAddressPoolObject[] } | undefined;
  /** MetalLB's IPAddressPools, none where its CRD is not installed or not read. */
  metallbPoolList(): readonly IPAddressPoolObject[];
  /** The speakers' announcements of a Service's addresses; undefined where nothing reports them. */
  announcements?(namespace: string, name: string): Announcement[] | undefined;
  /** One Service by namespace/name, where the view can look one up. */
  service?(key: string): V1Service | undefined;
}
