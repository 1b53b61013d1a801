// Address arithmetic for subnets and frontends: prefixes are parsed into BigInt ranges so that IPv4 and IPv6 share
// one implementation of containment, overlap and "next free address".
import { isIPv4, isIPv6 } from "node:net";

export interface Prefix {
  version: 4 | 6;
  first: bigint;
  last: bigint;
  text: string;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6ToBigInt(ip: string): bigint {
  let text = ip;
  const v4tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4tail) {
    const n = ipv4ToBigInt(v4tail[1]!);
    text = text.replace(v4tail[1]!, `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`);
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const headParts = head ? head.split(":") : [];
  const tailParts = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(parseInt(part, 16)), 0n);
}

export function ipToBigInt(ip: string): { version: 4 | 6; value: bigint } | undefined {
  if (isIPv4(ip)) return { version: 4, value: ipv4ToBigInt(ip) };
  if (isIPv6(ip)) return { version: 6, value: ipv6ToBigInt(ip) };
  return undefined;
}

export function bigIntToIp(value: bigint, version: 4 | 6): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join(".");
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  // Compress the longest run of zero groups, as every IPv6 formatter does.
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len && j - i > 1) best = { start: i, len: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(":");
  return `${groups.slice(0, best.start).join(":")}::${groups.slice(best.start + best.len).join(":")}`;
}

/** Parses `10.0.0.0/16` or `fd00::/64`; undefined when it is not a valid prefix. */
export function parsePrefix(text: string): Prefix | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const ip = ipToBigInt(m[1]!);
  if (!ip) return undefined;
  const bits = ip.version === 4 ? 32 : 128;
  const length = Number(m[2]);
  if (length > bits) return undefined;
  const hostBits = BigInt(bits - length);
  const first = (ip.value >> hostBits) << hostBits;
  return { version: ip.version, first, last: first + (1n << hostBits) - 1n, text };
}

export const contains = (outer: Prefix, inner: Prefix): boolean =>
  outer.version === inner.version && inner.first >= outer.first && inner.last <= outer.last;

export const overlaps = (a: Prefix, b: Prefix): boolean =>
  a.version === b.version && a.first <= b.last && b.first <= a.last;

export function containsIp(prefix: Prefix, ip: string): boolean {
  const parsed = ipToBigInt(ip);
  return (
    parsed !== undefined &&
    parsed.version === prefix.version &&
    parsed.value >= prefix.first &&
    parsed.value <= prefix.last
  );
}

/**
 * Azure reserves the first four addresses and the last one of every subnet, so the first address handed out in
 * 10.0.0.0/24 is 10.0.0.4. Returns undefined when the subnet is full.
 */
export function firstFreeAddress(prefix: Prefix, used: ReadonlySet<string>): string | undefined {
  const lastUsable = prefix.version === 4 ? prefix.last - 1n : prefix.last;
  for (let v = prefix.first + 4n; v <= lastUsable; v++) {
    const ip = bigIntToIp(v, prefix.version);
    if (!used.has(ip)) return ip;
  }
  return undefined;
}

/** Whether `ip` is one of the addresses Azure keeps for itself in `prefix`. */
export function isReservedAddress(prefix: Prefix, ip: string): boolean {
  const parsed = ipToBigInt(ip);
  if (!parsed) return false;
  return parsed.value < prefix.first + 4n || (prefix.version === 4 && parsed.value === prefix.last);
}
