// What every decoder returns. Frames arrive from the wire, so decoders never throw: a frame is either
// decoded or "malformed" with a reason the speaker can count in a metric and log at debug level.

export type MalformedReason =
  | "Truncated"
  | "TooManyVlanTags"
  | "UnsupportedHardwareType"
  | "UnsupportedProtocolType"
  | "BadHardwareLength"
  | "BadProtocolLength"
  | "UnknownArpOperation"
  | "NotIPv6"
  | "BadPayloadLength"
  | "UnsupportedNextHeader"
  | "UnsupportedIcmpType"
  | "BadChecksum"
  | "BadHopLimit"
  | "BadIcmpCode"
  | "ZeroLengthOption"
  | "TruncatedOption"
  | "BadLinkLayerOption"
  | "MulticastTarget"
  | "BadDadSolicitation"
  | "SolicitedToMulticast";

export type Decoded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: MalformedReason; readonly detail: string };

export function malformed(
  reason: MalformedReason,
  detail: string,
): { ok: false; reason: MalformedReason; detail: string } {
  return { ok: false, reason, detail };
}

export function decoded<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** Big-endian 16-bit read; callers check lengths first, so this never reads past the end. */
export function readUint16(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] ?? 0) << 8) | (bytes[offset + 1] ?? 0);
}

export function writeUint16(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = (value >>> 8) & 0xff;
  bytes[offset + 1] = value & 0xff;
}

/** A view (no copy) of a Uint8Array or Buffer as a Buffer, for convenient comparisons and hex output. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
