import { expect, test } from "vitest";
import { readAgentStatus } from "./sessions.ts";

test("FRR's neighbour and BFD views reduced to each session's state, prefixes sent and cause", () => {
  const status = readAgentStatus({
    time: 1700000000,
    reload: { generation: 7, ok: true, output: "" },
    neighbors: {
      "192.0.2.1": {
        bgpState: "Established",
        connectionsEstablished: 1,
        addressFamilyInfo: { ipv4Unicast: { sentPrefixCounter: 3 }, ipv6Unicast: { sentPrefixCounter: 1 } },
      },
      "192.0.2.2": {
        bgpState: "Active",
        connectionsEstablished: 0,
        lastNotificationReason: "OPEN Message Error/Bad Peer AS",
      },
      "192.0.2.3": {
        bgpState: "Connect",
        connectionsEstablished: 0,
        lastResetDueTo: "Waiting for peer OPEN",
      },
      "192.0.2.4": { bgpState: "Idle", connectionsEstablished: 2, lastResetDueTo: "Hold Timer Expired" },
    },
    bfd: [
      { peer: "192.0.2.1", status: "up" },
      { peer: "192.0.2.4", status: "down" },
    ],
  });
  expect(status?.reload).toEqual({ generation: 7, ok: true, output: "" });
  expect([...status!.sessions.values()]).toEqual([
    { address: "192.0.2.1", state: "Established", established: true, prefixesSent: 4, bfd: "up" },
    {
      address: "192.0.2.2",
      state: "Active",
      established: false,
      prefixesSent: 0,
      lastError: "OPEN Message Error/Bad Peer AS",
    },
    {
      address: "192.0.2.3",
      state: "Connect",
      established: false,
      prefixesSent: 0,
      lastError: expect.stringContaining("refuses the session's password") as unknown as string,
    },
    {
      address: "192.0.2.4",
      state: "Idle",
      established: false,
      prefixesSent: 0,
      bfd: "down",
      lastError: "Hold Timer Expired",
    },
  ]);
});

test("what cannot be read is no status, and a failing FRR is said", () => {
  expect(readAgentStatus("nonsense")).toBeUndefined();
  const down = readAgentStatus({ time: 1, reload: {}, error: "bgpd is not running" });
  expect(down).toMatchObject({ error: "bgpd is not running", reload: { generation: null, ok: null } });
  expect(down?.sessions.size).toBe(0);
});
