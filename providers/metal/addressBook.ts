// Who holds which address. This is the single source of truth that keeps an address from being handed
// out twice: every path that gives a Service an address asks `conflictFor` first, and an address is
// only ever shared between Services that carry the same sharing key and use disjoint ports.
import type { IPAddress, IPFamily } from "../../shared/address.ts";
import { formatPort, type AllocationError, type ServicePort } from "../../shared/allocationTypes.ts";
import { notAService } from "./holders.ts";

export interface Holder {
  readonly serviceKey: string;
  readonly sharingKey: string | undefined;
  readonly ports: readonly ServicePort[];
  /** sharingBackend: "" for Cluster, the pods' selector for Local. */
  readonly backend: string;
}

export class AddressBook {
  private readonly held: Record<IPFamily, Map<bigint, Map<string, Holder>>> = {
    IPv4: new Map(),
    IPv6: new Map(),
  };

  /** Holders of an address other than `exceptService`. */
  holders(address: Pick<IPAddress, "family" | "value">, exceptService?: string): Holder[] {
    const holders = this.held[address.family].get(address.value);
    if (!holders) return [];
    return [...holders.values()].filter((holder) => holder.serviceKey !== exceptService);
  }

  isFreeFor(family: IPFamily, value: bigint, serviceKey: string): boolean {
    const holders = this.held[family].get(value);
    if (!holders) return true;
    return holders.size === 1 && holders.has(serviceKey);
  }

  /** Distinct held address values of one family. */
  values(family: IPFamily): IterableIterator<bigint> {
    return this.held[family].keys();
  }

  add(address: Pick<IPAddress, "family" | "value">, holder: Holder): void {
    const byValue = this.held[address.family];
    let holders = byValue.get(address.value);
    if (!holders) {
      holders = new Map();
      byValue.set(address.value, holders);
    }
    holders.set(holder.serviceKey, holder);
  }

  remove(address: Pick<IPAddress, "family" | "value">, serviceKey: string): void {
    const byValue = this.held[address.family];
    const holders = byValue.get(address.value);
    if (!holders) return;
    holders.delete(serviceKey);
    if (holders.size === 0) byValue.delete(address.value);
  }

  /**
   * Why `candidate` may not use `address` alongside its current holders, or undefined when it may.
   * The candidate's own holding is ignored, so re-checking a Service against itself always passes.
   */
  conflictFor(
    address: IPAddress,
    candidate: Holder,
    field?: string,
    /** Read back after a restart: a pair made before this rule keeps its address, and its next pass says why. */
    restoring = false,
  ): AllocationError | undefined {
    const others = this.holders(address, candidate.serviceKey);
    const first = others[0];
    if (!first) return undefined;
    const usedBy = others.map((holder) => holder.serviceKey).sort();
    const users = usedBy.join(", ");
    const base = { address: address.text, usedBy, ...(field === undefined ? {} : { field }) };
    // A node or another host is not a Service: no sharing key makes its address usable.
    const notService = others.map((holder) => notAService(holder.serviceKey)).find((n) => n !== undefined);
    if (notService?.kind === "node")
      return {
        reason: "AddressInUse",
        ...base,
        message:
          `${address.text} is node ${notService.node}'s own address, which is never given to a Service; ` +
          `request another address, and take this one out of the pool's spec.addresses`,
      };
    if (notService?.kind === "lanHost")
      return {
        reason: "AddressInUse",
        ...base,
        message:
          `${address.text} is in use on the LAN by a host that is not a speaker, so it is not given to a Service; ` +
          `request another address, or free it on that host (it is tried again an hour after it was found)`,
      };
    if (first.sharingKey === undefined) {
      return {
        reason: "AddressInUse",
        ...base,
        message:
          `${address.text} is already used by Service ${users}, which does not allow sharing; ` +
          `choose another address, or give both Services the same allow-shared-ip annotation`,
      };
    }
    if (candidate.sharingKey === undefined) {
      return {
        reason: "AddressInUse",
        ...base,
        message:
          `${address.text} is already used by Service ${users}; to share it, set the annotation ` +
          `portico.io/allow-shared-ip (or metallb.io/allow-shared-ip) to "${first.sharingKey}", ` +
          `otherwise choose another address`,
      };
    }
    if (candidate.sharingKey !== first.sharingKey) {
      return {
        reason: "SharingKeyMismatch",
        ...base,
        theirSharingKey: first.sharingKey,
        message:
          `${address.text} is shared under key "${first.sharingKey}" by Service ${users}, but this Service's ` +
          `sharing key is "${candidate.sharingKey}"; use the same allow-shared-ip value or another address`,
      };
    }
    const apart = restoring ? undefined : others.find((holder) => holder.backend !== candidate.backend);
    if (apart)
      return {
        reason: "BackendMismatch",
        ...base,
        usedBy: apart.serviceKey,
        message:
          `${address.text} is shared with Service ${apart.serviceKey}, and one node announces a shared address: with ` +
          `externalTrafficPolicy Local only that node's own endpoints answer, so Services sharing an address must both ` +
          `use Cluster, or both use Local with the same spec.selector; align them, or use another address`,
      };
    for (const holder of others) {
      for (const port of candidate.ports) {
        if (holder.ports.some((their) => their.protocol === port.protocol && their.port === port.port)) {
          return {
            reason: "PortConflict",
            ...base,
            port,
            usedBy: holder.serviceKey,
            message:
              `${address.text} already serves ${formatPort(port)} for Service ${holder.serviceKey}; ` +
              `Services sharing an address need distinct ports, so change the port or use another address`,
          };
        }
      }
    }
    return undefined;
  }
}
