// IP-level membership of solicited-node multicast groups. A packet socket's multicast membership only
// opens the NIC's filter; joining the group through the IPv6 stack as well makes the kernel send MLD
// reports, so switches with MLD snooping forward Neighbor Solicitations for the address to this port.
import { createSocket, type Socket } from "node:dgram";

export interface MulticastGroups {
  join(group: string, iface: string): void;
  leave(group: string, iface: string): void;
  close(): void;
}

/** One unconnected UDP socket whose only job is holding group memberships; failures are reported, not thrown. */
export async function ipv6MulticastGroups(onError: (err: Error) => void): Promise<MulticastGroups> {
  let socket: Socket | undefined = createSocket({ type: "udp6" });
  try {
    await new Promise<void>((resolve, reject) => {
      socket!.once("error", reject);
      socket!.bind(0, "::", () => resolve());
    });
    socket.on("error", onError);
  } catch (err) {
    // No IPv6 on this host: there are no IPv6 addresses to announce either.
    onError(err as Error);
    socket.close();
    socket = undefined;
  }
  const apply = (action: "addMembership" | "dropMembership", group: string, iface: string) => {
    try {
      socket?.[action](group, `::%${iface}`);
    } catch (err) {
      onError(err as Error);
    }
  };
  return {
    join: (group, iface) => apply("addMembership", group, iface),
    leave: (group, iface) => apply("dropMembership", group, iface),
    close: () => socket?.close(),
  };
}
