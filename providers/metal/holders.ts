// Who holds an address in the allocator. Mostly Services, by their namespace/name key; but a node's own address
// inside a pool, and an address another host on the LAN answers for, are held too, so that no Service is given
// them. Their keys begin with "~", which cannot begin a namespace, so they are never a Service's. A message naming
// a holder says which kind it is, because the remedy differs: Services can share an address (the same
// allow-shared-ip key), a node or another host cannot.

const NODE = "~node/";
const LAN_HOST = "~inuse/";

/** The holder of a node's own address found inside a pool. */
export const nodeHolder = (node: string): string => `${NODE}${node}`;

/** The holder of an address another host on the LAN was found using. */
export const lanHostHolder = (address: string): string => `${LAN_HOST}${address}`;

/** A Service's key, as opposed to a node or another host. */
export const isServiceHolder = (key: string): boolean => !key.startsWith("~");

/** What holds `address` when the holder is not a Service, as the rest of a sentence "<address> is …". */
export type NotAService = { kind: "node"; node: string } | { kind: "lanHost" };

export function notAService(key: string): NotAService | undefined {
  if (key.startsWith(NODE)) return { kind: "node", node: key.slice(NODE.length) };
  if (key.startsWith(LAN_HOST)) return { kind: "lanHost" };
  return undefined;
}

/** "node node-0's own address", "in use on the LAN by a host that is not a speaker", or "held by Service ns/name". */
export function describeHolder(key: string): string {
  const other = notAService(key);
  if (other?.kind === "node") return `node ${other.node}'s own address`;
  if (other?.kind === "lanHost") return "in use on the LAN by a host that is not a speaker";
  return `held by Service ${key}`;
}
