// The packet-socket addon (speaker/native), loaded once, with the types of what it exports.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** An open packet socket; only meaningful to the addon's functions. */
export type SocketHandle = { readonly __packetSocket: unique symbol };

export interface NativeInterface {
  readonly name: string;
  readonly index: number;
  /** The hardware address for Ethernet interfaces, null otherwise. */
  readonly mac: Buffer | null;
  readonly up: boolean;
  readonly loopback: boolean;
  readonly ethernet: boolean;
}

export interface NativeSocketStats {
  /** Frames the filter let through (before JavaScript decided anything). */
  readonly received: number;
  /** Frames longer than the receive buffer, passed on cut short. */
  readonly truncated: number;
  /** Frames whose VLAN tag the NIC stripped: they belong to a VLAN interface and are not answered here. */
  readonly vlanTagged: number;
  /** Frames the kernel dropped because the socket buffer was full (the process did not keep up). */
  readonly kernelDrops: number;
  /** Times the link went down under the socket (it resumes by itself when the link returns). */
  readonly linkDown: number;
}

export interface PacketAddon {
  /** Opens a socket on the interface; `onFrames` receives up to 64 frames per call, or an errno. */
  open(interfaceName: string, onFrames: (frames: Buffer[], errno: number) => void): SocketHandle;
  /** 0, or the errno of the failed send. */
  send(handle: SocketHandle, frame: Buffer): number;
  multicast(handle: SocketHandle, mac: Buffer, join: boolean): void;
  stats(handle: SocketHandle): NativeSocketStats;
  close(handle: SocketHandle): void;
  interfaces(): NativeInterface[];
}

const ADDON_FILE = "portico_packet.node";

/**
 * Where the built addon is: PORTICO_PACKET_ADDON if set, else speaker/native/build/Release of the source
 * tree, found from this file both when run as TypeScript (speaker/io) and when compiled (dist/speaker/io).
 */
export function addonPath(): string {
  const fromEnv = process.env.PORTICO_PACKET_ADDON;
  if (fromEnv) return fromEnv;
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    resolve(here, "../native/build/Release", ADDON_FILE),
    resolve(here, "../../../speaker/native/build/Release", ADDON_FILE),
  ];
  return candidates.find((path) => existsSync(path)) ?? candidates[0]!;
}

let loaded: PacketAddon | undefined;

export function loadAddon(): PacketAddon {
  if (loaded) return loaded;
  const path = addonPath();
  if (!existsSync(path)) {
    throw new Error(`the packet-socket addon is not built (${path} is missing): run speaker/native/build.sh`);
  }
  loaded = createRequire(import.meta.url)(path) as PacketAddon;
  return loaded;
}
