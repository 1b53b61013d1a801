// One place that turns address text into numbers and back. Every other bare-metal module compares
// addresses as (family, bigint) pairs or as the canonical text produced here, so "fd00::0001" and
// "fd00::1" can never be mistaken for two different addresses.
import { Address4, Address6 } from "ip-address";

export type IPFamily = "IPv4" | "IPv6";

export const IP_FAMILIES: readonly IPFamily[] = ["IPv4", "IPv6"];

export interface IPAddress {
  readonly family: IPFamily;
  readonly value: bigint;
  /** Canonical text: dotted decimal for IPv4, RFC 5952 compressed lowercase for IPv6. */
  readonly text: string;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; problem: string };

const BITS: Record<IPFamily, number> = { IPv4: 32, IPv6: 128 };

export function familyBits(family: IPFamily): number {
  return BITS[family];
}

export function otherFamily(family: IPFamily): IPFamily {
  return family === "IPv4" ? "IPv6" : "IPv4";
}

/**
 * Parses a single address (no prefix length, no zone). Returns a problem sentence instead of throwing,
 * because the text comes from users (annotations, pool specs, Service status).
 */
export function parseIP(text: string): ParseResult<IPAddress> {
  if (text.includes("/")) {
    return { ok: false, problem: `"${text}" is a network, not a single address; remove the "/" suffix` };
  }
  if (text.includes("%")) {
    return { ok: false, problem: `"${text}" carries a zone ("%..."); zones are not allowed, remove it` };
  }
  if (Address4.isValid(text)) {
    const address = new Address4(text);
    return { ok: true, value: { family: "IPv4", value: address.bigInt(), text: address.correctForm() } };
  }
  if (Address6.isValid(text)) {
    const address = new Address6(text);
    if (address.isMapped4()) {
      return {
        ok: false,
        problem: `"${text}" is an IPv4-mapped IPv6 address; write the IPv4 address itself instead`,
      };
    }
    return { ok: true, value: { family: "IPv6", value: address.bigInt(), text: address.correctForm() } };
  }
  return { ok: false, problem: `"${text}" is not a valid IPv4 or IPv6 address` };
}

/** The canonical text of an address, or undefined when the text is not a single valid address. */
export function canonicalIP(text: string): string | undefined {
  const parsed = parseIP(text);
  return parsed.ok ? parsed.value.text : undefined;
}

export function formatIP(family: IPFamily, value: bigint): string {
  return family === "IPv4"
    ? Address4.fromBigInt(value).correctForm()
    : Address6.fromBigInt(value).correctForm();
}

export function ipFromValue(family: IPFamily, value: bigint): IPAddress {
  return { family, value, text: formatIP(family, value) };
}

/** Formats 4 or 16 network-order bytes; used by the packet decoders. */
export function formatIPBytes(bytes: Uint8Array): string {
  const list = Array.from(bytes);
  return bytes.length === 4
    ? Address4.fromByteArray(list).correctForm()
    : Address6.fromUnsignedByteArray(list).correctForm();
}

/** Network-order bytes of an address (4 for IPv4, 16 for IPv6). */
export function ipBytes(address: IPAddress): Uint8Array {
  return address.family === "IPv4"
    ? Uint8Array.from(Address4.fromBigInt(address.value).toArray())
    : Uint8Array.from(Address6.fromBigInt(address.value).toUnsignedByteArray());
}
