// `make bench-speaker`: how fast the speaker answers ARP and NDP for a Service address, next to the node's
// kernel answering for its own address on the same machine at the same moments.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { IP, type LanHost } from "../test/harness/netns.ts";
import { waitFor } from "../test/harness/wait.ts";
import type { MetalCluster, MetalNode } from "../test/integration/metal/speakers.ts";
import { percentile, sleep } from "./report.ts";

/**
 * Round trips as arping sees them (request sent to reply captured), for the Service address (the speaker
 * answers) and for the same node's own LAN address (its kernel answers), in alternating rounds so that both
 * see the same machine.
 */
export async function arpLatency(metal: MetalCluster, node: MetalNode, address: string, requests: number) {
  const speaker: number[] = [];
  const kernel: number[] = [];
  const round = 50;
  for (let done = 0; done < requests; done += round) {
    const count = Math.min(round, requests - done);
    speaker.push(...(await arpRtts(metal.lan.client, address, count, node.mac)));
    kernel.push(...(await arpRtts(metal.lan.client, node.host.ipv4, count, node.mac)));
  }
  return { requests, speaker: summary(speaker), kernel: summary(kernel) };
}

/** `arping -c count` 10 ms apart; arping() in clients.ts waits 200 ms between requests and stops after 5 s. */
async function arpRtts(from: LanHost, address: string, count: number, mac: string) {
  const args = ["-c", String(count), "-W", "0.01", "-w", String(5 + count), "-i", from.iface, address];
  const text = await output(IP, ["netns", "exec", from.namespace, "arping", ...args]);
  const replies = [...text.matchAll(/bytes from ([0-9a-f:]{17}) \(.*time=([\d.]+) (msec|usec)/g)];
  const wrong = replies.filter((m) => m[1] !== mac);
  if (!replies.length || wrong.length)
    throw new Error(
      `ARP for ${address}: expected replies from ${mac} alone, arping said: ${text.slice(-500)}`,
    );
  return replies.map((m) => Number(m[2]) / (m[3] === "usec" ? 1000 : 1));
}

/**
 * ndisc6 prints no timings, so the client's interface is captured with tcpdump and each solicitation paired
 * with the advertisement answering it: the time between the two on the client's wire.
 */
export async function ndpLatency(
  metal: MetalCluster,
  node: MetalNode,
  address: string,
  solicitations: number,
) {
  const { lan } = metal;
  const client = lan.client;
  const seen: { time: number; kind: "solicitation" | "advertisement"; from: string; target: string }[] = [];
  const capture = lan.start(
    client,
    "tcpdump-ndp",
    "tcpdump",
    ["-i", client.iface, "-n", "-tt", "-l", "icmp6 and (ip6[40] == 135 or ip6[40] == 136)"],
    {
      onLine: (line) => {
        const m =
          /^(\d+\.\d+) IP6 (\S+) > \S+: ICMP6, neighbor (solicitation|advertisement), (?:who has|tgt is) ([0-9a-f:]+)/.exec(
            line,
          );
        if (m)
          seen.push({
            time: Number(m[1]) * 1000,
            from: m[2]!,
            kind: m[3] as "solicitation" | "advertisement",
            target: m[4]!,
          });
      },
    },
  );
  const solicit = (target: string) =>
    output(IP, [
      "netns",
      "exec",
      client.namespace,
      "ndisc6",
      "-1",
      "-n",
      "-r",
      "1",
      "-w",
      "1000",
      target,
      client.iface,
    ]);
  // tcpdump says it listens on standard error only; a captured exchange says the same.
  await waitFor("tcpdump to capture a neighbour solicitation", async () => {
    await solicit(node.host.ipv6);
    return seen.some((s) => s.kind === "advertisement");
  });
  // Late lines of the warm-up are not counted.
  await sleep(300);
  const start = seen.length;
  for (let i = 0; i < solicitations; i++) {
    await solicit(address);
    await solicit(node.host.ipv6);
  }
  await sleep(300);
  await capture.kill();
  const rtts = (target: string) => {
    const out: number[] = [];
    const events = seen.slice(start).filter((e) => e.target === target);
    for (const [i, e] of events.entries()) {
      // Only the client solicits these targets (from its link-local or global address).
      if (e.kind !== "solicitation") continue;
      const answer = events.slice(i + 1).find((a) => a.kind === "advertisement");
      if (answer) out.push(answer.time - e.time);
    }
    if (!out.length)
      throw new Error(
        `no neighbour advertisement for ${target} was captured; tcpdump saw: ${JSON.stringify(seen.slice(-6))}`,
      );
    return out;
  };
  return {
    solicitations: solicitations,
    speaker: summary(rtts(address)),
    kernel: summary(rtts(node.host.ipv6)),
  };
}

const ms = (value: number) => +value.toFixed(3);

export function summary(values: number[], digits = 3) {
  const round = digits ? ms : Math.round;
  return {
    p50Ms: round(percentile(values, 50)),
    p99Ms: round(percentile(values, 99)),
    maxMs: round(Math.max(...values)),
    samples: values.length,
  };
}

/** stdout even when the command exits non-zero (arping does when a request goes unanswered). */
async function output(command: string, args: string[]): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { timeout: 120_000 })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? "";
  }
}
