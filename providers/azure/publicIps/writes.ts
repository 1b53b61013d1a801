// Writes of the public IPs Portico makes: creating one with everything that is fixed at creation (SKU, version,
// IP tags, prefix) and its DNS label, changing the label later, editing the tags that record who shares it, and a
// Service leaving it (the last one deleting it). Each is safe to repeat.
import { CloudError } from "../../errors.ts";
import { armError, call, classify, isNotFound, type AzureClients } from "../arm/clients.ts";
import { putThenRead } from "../arm/lro.ts";
import type { PublicIPAddress } from "../model.ts";
import type { IpTag } from "../annotations/publicIp.ts";

export interface PublicIpTarget {
  name: string;
  resourceGroup: string;
}

export async function createPublicIp(
  clients: AzureClients,
  where: PublicIpTarget & {
    location: string;
    tags: Record<string, string>;
    dnsLabel?: string;
    ipTags: IpTag[];
    prefixId?: string;
    version?: "IPv4" | "IPv6";
  },
): Promise<PublicIPAddress> {
  const pips = clients.network.publicIPAddresses;
  return await call("publicIPAddresses:createOrUpdate", () =>
    putThenRead(
      (onResponse) =>
        pips.createOrUpdate(
          where.resourceGroup,
          where.name,
          {
            location: where.location,
            sku: { name: "Standard", tier: "Regional" },
            publicIPAllocationMethod: "Static",
            publicIPAddressVersion: where.version ?? "IPv4",
            tags: where.tags,
            ...(where.ipTags.length ? { ipTags: where.ipTags } : {}),
            ...(where.dnsLabel ? { dnsSettings: { domainNameLabel: where.dnsLabel } } : {}),
            // ARM allocates the address from the prefix; the prefix's region must be the public IP's.
            ...(where.prefixId ? { publicIPPrefix: { id: where.prefixId } } : {}),
          },
          // Create only: a public IP someone made meanwhile under this name is not Portico's to overwrite.
          {
            updateIntervalInMs: clients.pollIntervalMs,
            requestOptions: { headers: { "If-None-Match": "*" } },
            onResponse,
          },
        ),
      // Its address comes with the create's completion: the read that sees it done has it.
      () => pips.get(where.resourceGroup, where.name),
      clients.pollIntervalMs,
    ),
  );
}

/**
 * Sets (or, with none, removes) the DNS label of Portico's own public IP: the public IP as read now with only
 * its label changed, written back only if nobody changed it in between (If-Match). A lost race fails the
 * reconcile, and the next one starts from a fresh read.
 */
export async function setPublicIpDnsLabel(
  clients: AzureClients,
  where: PublicIpTarget & { dnsLabel?: string },
): Promise<PublicIPAddress> {
  const pips = clients.network.publicIPAddresses;
  const current = await call("publicIPAddresses:get", () => pips.get(where.resourceGroup, where.name));
  const { dnsSettings: _old, ...rest } = current;
  const body: PublicIPAddress = {
    ...rest,
    ...(where.dnsLabel ? { dnsSettings: { domainNameLabel: where.dnsLabel } } : {}),
  };
  return await call("publicIPAddresses:createOrUpdate", () =>
    pips.createOrUpdate(where.resourceGroup, where.name, body, {
      updateIntervalInMs: clients.pollIntervalMs,
      requestOptions: { headers: { "If-Match": current.etag ?? "" } },
    }),
  );
}

/**
 * Edits the tags of Portico's public IP from a fresh read, written only if nobody changed the public IP in
 * between (If-Match); a lost race reads again, so that two Services joining or leaving at once both count.
 */
export async function editPublicIpTags(
  clients: AzureClients,
  where: PublicIpTarget,
  edit: (tags: Record<string, string>) => Record<string, string>,
): Promise<void> {
  const pips = clients.network.publicIPAddresses;
  for (let attempt = 1; ; attempt++) {
    const current = await call("publicIPAddresses:get", () => pips.get(where.resourceGroup, where.name));
    const tags = current.tags ?? {};
    const next = edit(tags);
    if (JSON.stringify(next) === JSON.stringify(tags)) return;
    try {
      await call("publicIPAddresses:createOrUpdate", () =>
        pips.createOrUpdate(
          where.resourceGroup,
          where.name,
          { ...current, tags: next },
          {
            updateIntervalInMs: clients.pollIntervalMs,
            requestOptions: { headers: { "If-Match": current.etag ?? "" } },
          },
        ),
      );
      return;
    } catch (err) {
      if (attempt >= 3 || !(err instanceof CloudError) || err.code !== "PreconditionFailed") throw err;
    }
  }
}

/** Rounds of read and conditional write before a leave gives up (the reconcile is then retried). */
const LEAVE_ATTEMPTS = 10;

/**
 * A Service leaving Portico's public IP: `decide` is asked, on each fresh read, what its leaving does there —
 * nothing (it is not on the tags any more), new tags, or the public IP deleted (nobody is left) — and that is
 * written only if nobody changed the public IP in between (If-Match, on the tags' write and on the delete alike).
 * Services deleted together thus leave one at a time, each on what the others left, whatever the order, and the
 * last one out deletes it. A lost race, or ARM still busy with another Service's write, reads again. The first
 * round goes from `seen`, the public IP as the pass observed it, when it has its etag: a Service deleted alone
 * deletes its public IP in one call, as before, and a stale one costs the 412 a read would have cost.
 */
export async function leavePublicIp(
  clients: AzureClients,
  where: PublicIpTarget,
  decide: (tags: Record<string, string>) => { delete: true } | { tags: Record<string, string> } | undefined,
  seen?: PublicIPAddress,
): Promise<void> {
  const pips = clients.network.publicIPAddresses;
  const poll = { updateIntervalInMs: clients.pollIntervalMs };
  for (let attempt = 1; ; attempt++) {
    let current: PublicIPAddress;
    if (attempt === 1 && seen?.etag) current = seen;
    else
      try {
        current = await call("publicIPAddresses:get", () => pips.get(where.resourceGroup, where.name));
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    const decision = decide(current.tags ?? {});
    if (!decision) return;
    const ifMatch = { requestOptions: { headers: { "If-Match": current.etag ?? "" } } };
    try {
      if ("delete" in decision) await pips.delete(where.resourceGroup, where.name, { ...poll, ...ifMatch });
      else
        await pips.createOrUpdate(
          where.resourceGroup,
          where.name,
          { ...current, tags: decision.tags },
          {
            ...poll,
            ...ifMatch,
          },
        );
      return;
    } catch (err) {
      const info = armError(err);
      // Gone meanwhile (deleted by the Service that left last): nothing is left to leave.
      if (isNotFound(err)) return;
      const raced = info.status === 412 || info.code === "PreconditionFailed";
      const busy = info.code === "AnotherOperationInProgress" || info.status === 409;
      const operation =
        "delete" in decision ? "publicIPAddresses:delete" : "publicIPAddresses:createOrUpdate";
      if (attempt >= LEAVE_ATTEMPTS || !(raced || busy)) throw classify(operation, err);
      if (busy) await new Promise((r) => setTimeout(r, clients.pollIntervalMs));
    }
  }
}
