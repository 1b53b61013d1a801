// ELBv2's answer about target health, from the edge's health checks rather than the emulator's constant
// "healthy": a proxy in front of the AWS emulator that forwards every request and, in DescribeTargetHealth's
// answer, replaces each target's state with the one the edge's checks gave it, with ELBv2's reason codes. Portico's
// controller, talking to the emulator through it, then sees what a real NLB would tell it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TargetState } from "./checkPlan.ts";

/** ELBv2's reason and description for a state (DescribeTargetHealth's TargetHealth). */
const REASONS: Record<Exclude<TargetState, "healthy">, { reason: string; description: string }> = {
  initial: { reason: "Elb.InitialHealthChecking", description: "Initial health checks in progress" },
  unhealthy: { reason: "Target.FailedHealthChecks", description: "Health checks failed" },
};

/** Rewrites a DescribeTargetHealth answer's states with `stateOf` (undefined: not judged yet, so initial). */
export function rewriteTargetHealth(
  xml: string,
  stateOf: (id: string, port: number) => TargetState | undefined,
): string {
  return xml.replace(
    /<member><Target><Id>([^<]*)<\/Id><Port>(\d+)<\/Port>([\s\S]*?)<\/member>/g,
    (member, id: string, port: string) => {
      const state = stateOf(id, Number(port)) ?? "initial";
      const health =
        state === "healthy"
          ? "<TargetHealth><State>healthy</State></TargetHealth>"
          : `<TargetHealth><State>${state}</State><Reason>${REASONS[state].reason}</Reason><Description>${REASONS[state].description}</Description></TargetHealth>`;
      return member.replace(/<TargetHealth>[\s\S]*?<\/TargetHealth>/, health);
    },
  );
}

export interface HealthReportProxy {
  port: number;
  close(): Promise<void>;
}

export async function startHealthReport(
  emulator: string,
  stateOf: (targetGroupArn: string, id: string, port: number) => TargetState | undefined,
): Promise<HealthReportProxy> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const params = new URLSearchParams(body.toString());
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k)),
      ) as Record<string, string>;
      fetch(new URL(req.url ?? "/", emulator), {
        method: req.method ?? "GET",
        headers,
        ...(body.length ? { body } : {}),
      })
        .then(async (answer) => {
          let text = await answer.text();
          const group = params.get("TargetGroupArn");
          if (params.get("Action") === "DescribeTargetHealth" && group && answer.ok)
            text = rewriteTargetHealth(text, (id, port) => stateOf(group, id, port));
          res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/xml" });
          res.end(text);
        })
        .catch((err: unknown) => {
          res.writeHead(502);
          res.end(String(err));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
