// A quiet stretch of the ARP client (arpRecorder.ts), for the benchmark: answered/asked and reply latency as
// the client's kernel timestamped them, and what the announcing speaker went through meanwhile, to tell why
// a request went unanswered — the speaker never got it (kernel queue), refused it (rate limit), answered it
// late (its event loop stalled: the longest stall, and garbage collection's share), or was not given the CPU
// (time its process spent runnable but waiting for a core, from /proc/<pid>/schedstat).
import { readFile } from "node:fs/promises";
import type { LanHost } from "../../harness/netns.ts";
import type { ArpRecorder } from "./arpRecorder.ts";
import { metricSum, speakerMetrics } from "./clients.ts";
import { exchangeFigures } from "./exchanges.ts";

export async function measureSteady(
  recorder: ArpRecorder,
  speaker: { host: LanHost; pid: number },
  seconds: number,
) {
  // Scraping resets prom-client's event-loop delay histogram: the second scrape covers the stretch alone.
  const before = await speakerMetrics(speaker.host);
  const waitBefore = await runQueueWaitMs(speaker.pid);
  const since = Date.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const until = Date.now();
  const after = await speakerMetrics(speaker.host);
  const waitAfter = await runQueueWaitMs(speaker.pid);
  const delta = (name: string, ...labels: string[]) =>
    metricSum(after, name, ...labels) - metricSum(before, name, ...labels);

  const exchanges = recorder.exchanges(since, until);
  const figures = exchangeFigures(exchanges);
  const latencies = [...figures.latenciesMs].sort((a, b) => a - b);
  const at = (p: number) =>
    +(latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? NaN).toFixed(
      3,
    );
  return {
    seconds,
    answeredOfAsked: `${figures.answered}/${figures.asked}`,
    // Answered before the client asked again, as a requester retrying at this rate needs (what counts as answered).
    answeredBeforeNextRequest: `${figures.answered - figures.late}/${figures.asked}`,
    unanswered: exchanges.filter((e) => e.answers.length === 0).map((e) => new Date(e.sentAt).toISOString()),
    doubleAnswered: figures.doubleAnswered,
    longestSilenceMs: +figures.longestSilenceMs.toFixed(1),
    latencyMs: { p50: at(50), p99: at(99), max: at(100) },
    speaker: {
      // Counted by the speaker itself over the same stretch (it also sees the other speakers' probes, few).
      received: delta("portico_speaker_frames_received_total"),
      answered: delta("portico_speaker_requests_answered_total"),
      rateLimited: delta("portico_speaker_frames_dropped_total", 'reason="RateLimited"'),
      kernelQueueFull: delta("portico_speaker_frames_dropped_total", 'reason="KernelQueueFull"'),
      longestEventLoopStallMs: Math.round(1000 * metricSum(after, "nodejs_eventloop_lag_max_seconds")),
      gcPausesMs: Math.round(1000 * delta("nodejs_gc_duration_seconds_sum")),
      majorGcPausesMs: Math.round(1000 * delta("nodejs_gc_duration_seconds_sum", 'kind="major"')),
      runnableButWaitingForCpuMs: Math.round(waitAfter - waitBefore),
    },
  };
}

/** Time the process's main thread spent on a run queue waiting for a CPU (the second schedstat field, ns). */
async function runQueueWaitMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/task/${pid}/schedstat`, "utf8")).trim().split(/\s+/);
  return Number(fields[1]) / 1e6;
}
