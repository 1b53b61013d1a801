// Contiguous address ranges: the unit a pool is built from. A CIDR and a "first-last" range both become
// one inclusive [first, last] interval of one family, so size, membership and iteration are plain BigInt
// arithmetic and never depend on how large the range is.
import { Address4, Address6 } from "ip-address";
import { formatIP, parseIP, type IPFamily, type ParseResult } from "./address.ts";

export interface AddressRange {
  readonly family: IPFamily;
  /** Inclusive bounds. */
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * Parses one `spec.addresses` entry: a CIDR ("192.168.10.0/24", "fd00::/120") or a range
 * ("192.168.10.10-192.168.10.20", spaces around "-" allowed as MetalLB allows them).
 */
export function parseRangeEntry(entry: string): ParseResult<AddressRange> {
  const text = entry.trim();
  if (text === "") return { ok: false, problem: "the entry is empty; write a CIDR or a first-last range" };
  if (text.includes("-")) return parseDashRange(text);
  if (text.includes("/")) return parseCidr(text);
  const single = parseIP(text);
  if (!single.ok) return single;
  const prefix = single.value.family === "IPv4" ? 32 : 128;
  return {
    ok: false,
    problem: `"${text}" is a bare address; write "${single.value.text}/${prefix}" for a single address`,
  };
}

function parseCidr(text: string): ParseResult<AddressRange> {
  const [addressPart = "", prefixPart = ""] = text.split("/", 2);
  if (!/^\d{1,3}$/.test(prefixPart)) {
    return { ok: false, problem: `"${text}" has an invalid prefix length "/${prefixPart}"` };
  }
  const address = parseIP(addressPart);
  if (!address.ok) return address;
  const { family } = address.value;
  const prefix = Number(prefixPart);
  const bits = family === "IPv4" ? 32 : 128;
  if (prefix > bits) {
    return {
      ok: false,
      problem: `"${text}" has prefix length /${prefix}; ${family} allows at most /${bits}`,
    };
  }
  const network =
    family === "IPv4"
      ? new Address4(`${address.value.text}/${prefix}`)
      : new Address6(`${address.value.text}/${prefix}`);
  const first = network._startAddress();
  const last = network._endAddress();
  if (first !== address.value.value) {
    // Silently masking host bits would hide a typo ("192.168.1.10/24" meant /32, or meant .0/24?).
    return {
      ok: false,
      problem: `"${text}" has host bits set; did you mean "${formatIP(family, first)}/${prefix}"?`,
    };
  }
  return { ok: true, value: { family, first, last } };
}

function parseDashRange(text: string): ParseResult<AddressRange> {
  const parts = text.split("-");
  if (parts.length !== 2) {
    return { ok: false, problem: `"${text}" is not a range; write it as "first-last"` };
  }
  const start = parseIP((parts[0] ?? "").trim());
  if (!start.ok) return { ok: false, problem: `range start: ${start.problem}` };
  const end = parseIP((parts[1] ?? "").trim());
  if (!end.ok) return { ok: false, problem: `range end: ${end.problem}` };
  if (start.value.family !== end.value.family) {
    return { ok: false, problem: `"${text}" mixes IPv4 and IPv6; both ends must be of one family` };
  }
  if (start.value.value > end.value.value) {
    return {
      ok: false,
      problem: `"${text}" starts after it ends; write "${end.value.text}-${start.value.text}"`,
    };
  }
  return { ok: true, value: { family: start.value.family, first: start.value.value, last: end.value.value } };
}

export function rangeSize(range: AddressRange): bigint {
  return range.last - range.first + 1n;
}

export function rangeContains(range: AddressRange, family: IPFamily, value: bigint): boolean {
  return range.family === family && value >= range.first && value <= range.last;
}

export function rangeIntersection(a: AddressRange, b: AddressRange): AddressRange | undefined {
  if (a.family !== b.family) return undefined;
  const first = a.first > b.first ? a.first : b.first;
  const last = a.last < b.last ? a.last : b.last;
  return first <= last ? { family: a.family, first, last } : undefined;
}

/** "192.168.1.10-192.168.1.20", or the single address when the range holds one. */
export function formatRange(range: AddressRange): string {
  const first = formatIP(range.family, range.first);
  return range.first === range.last ? first : `${first}-${formatIP(range.family, range.last)}`;
}

// Some consumer routers and firmwares drop traffic to IPv4 addresses ending in .0 or .255 (smurf
// protection), whatever the prefix length; MetalLB's avoidBuggyIPs skips exactly those, and so do we.
export function isBuggyIPv4(family: IPFamily, value: bigint): boolean {
  if (family !== "IPv4") return false;
  const low = value & 0xffn;
  return low === 0n || low === 0xffn;
}

/** How many values v in [first, last] have v mod 256 === residue, in O(1). */
function countWithLowOctet(first: bigint, last: bigint, residue: bigint): bigint {
  const upTo = (n: bigint): bigint => (n < residue ? 0n : (n - residue) / 256n + 1n);
  return upTo(last) - (first === 0n ? 0n : upTo(first - 1n));
}

export function buggyCount(range: AddressRange): bigint {
  if (range.family !== "IPv4") return 0n;
  return countWithLowOctet(range.first, range.last, 0n) + countWithLowOctet(range.first, range.last, 255n);
}

/**
 * A CIDR whose address is not its network's first (e.g. 10.0.0.1/8): the two ways it may have been meant, for
 * an error that offers both. Undefined for a CIDR written as its network.
 */
export function hostBits(range: string): { network: string; single: string } | undefined {
  const [address, bits] = range.split("/") as [string, string];
  const v4 = Address4.isValid(range);
  const network = (v4 ? new Address4(range) : new Address6(range)).startAddress().correctForm();
  const given = (v4 ? new Address4(address) : new Address6(address)).correctForm();
  if (network === given) return undefined;
  return { network: `${network}/${bits}`, single: `${given}/${v4 ? 32 : 128}` };
}
