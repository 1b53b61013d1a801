// MAC addresses as lowercase "aa:bb:cc:dd:ee:ff" text at the API, 6 bytes on the wire.

export const BROADCAST_MAC = "ff:ff:ff:ff:ff:ff";
export const ZERO_MAC = "00:00:00:00:00:00";

const MAC_PATTERN = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

export function isMac(text: string): boolean {
  return MAC_PATTERN.test(text);
}

/** Bytes of a MAC given by the caller (not the wire): a malformed one is a programming error. */
export function macBytes(text: string): Uint8Array {
  if (!isMac(text)) throw new TypeError(`"${text}" is not a MAC address (expected aa:bb:cc:dd:ee:ff)`);
  return Uint8Array.from(text.split(":").map((part) => parseInt(part, 16)));
}

export function formatMac(bytes: Uint8Array, offset = 0): string {
  const parts: string[] = [];
  for (let i = 0; i < 6; i++) parts.push((bytes[offset + i] ?? 0).toString(16).padStart(2, "0"));
  return parts.join(":");
}

export function normalizeMac(text: string): string {
  return formatMac(macBytes(text));
}

/** IPv6 multicast to Ethernet (RFC 2464 §7): 33:33 followed by the last four address bytes. */
export function ipv6MulticastMac(address: Uint8Array): string {
  const tail = Array.from(address.subarray(12, 16), (b) => b.toString(16).padStart(2, "0"));
  return ["33", "33", ...tail].join(":");
}
