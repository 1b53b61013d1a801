// ELBv2's answer about target health, from the edge's health checks rather than the emulator's constant
// "healthy": a proxy in front of the AWS emulator that forwards every request and, in DescribeTargetHealth's
// answer, replaces each target's state with the one the edge's checks gave it, with ELBv2's reason codes. Portico's
// controller, talking to the emulator through it, then sees what a real NLB would tell it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TargetState } from "./checkPlan.ts";

/** What DescribeTargetHealth says of a target: its checks' verdict, or `draining` once deregistered. */
type ReportedState = TargetState | "draining";

/** ELBv2's reason and description for a state (DescribeTargetHealth's TargetHealth). */
const REASONS: Record<Exclude<ReportedState, "healthy">, { reason: string; description: string }> = {
  initial: { reason: "Elb.InitialHealthChecking", description: "Initial health checks in progress" },
  unhealthy: { reason: "Target.FailedHealthChecks", description: "Health checks failed" },
  draining: {
    reason: "Target.DeregistrationInProgress",
    description: "Target deregistration is in progress",
  },
};

/** Where the health report learns the targets' states: the NLB edge (nlbEdge.ts). */
export interface TargetHealthSource {
  /** A registered target's state as the edge's checks judge it; undefined while not judged yet. */
  stateOfTarget(targetGroupArn: string, id: string, port: number): TargetState | undefined;
  /** The deregistered targets still draining, which the emulator forgets at once and ELBv2 lists. */
  drainingIn(targetGroupArn: string): readonly { id: string; port: number }[];
}

function targetHealth(state: ReportedState): string {
  return state === "healthy"
    ? "<TargetHealth><State>healthy</State></TargetHealth>"
    : `<TargetHealth><State>${state}</State><Reason>${REASONS[state].reason}</Reason><Description>${REASONS[state].description}</Description></TargetHealth>`;
}

/**
 * Rewrites a DescribeTargetHealth answer's states with `stateOf` (undefined: not judged yet, so initial), and
 * lists the `draining` targets after the registered ones, as ELBv2 does until their drain ends.
 */
export function rewriteTargetHealth(
  xml: string,
  stateOf: (id: string, port: number) => TargetState | undefined,
  draining: readonly { id: string; port: number }[] = [],
): string {
  const rewritten = xml.replace(
    /<member><Target><Id>([^<]*)<\/Id><Port>(\d+)<\/Port>([\s\S]*?)<\/member>/g,
    (member, id: string, port: string) =>
      member.replace(
        /<TargetHealth>[\s\S]*?<\/TargetHealth>/,
        targetHealth(stateOf(id, Number(port)) ?? "initial"),
      ),
  );
  if (!draining.length) return rewritten;
  const members = draining
    .map(
      (t) =>
        `<member><Target><Id>${t.id}</Id><Port>${t.port}</Port></Target>${targetHealth("draining")}</member>`,
    )
    .join("");
  if (rewritten.includes("</TargetHealthDescriptions>"))
    return rewritten.replace("</TargetHealthDescriptions>", `${members}</TargetHealthDescriptions>`);
  if (rewritten.includes("<TargetHealthDescriptions/>"))
    return rewritten.replace(
      "<TargetHealthDescriptions/>",
      `<TargetHealthDescriptions>${members}</TargetHealthDescriptions>`,
    );
  return rewritten.replace(
    "<DescribeTargetHealthResult>",
    `<DescribeTargetHealthResult><TargetHealthDescriptions>${members}</TargetHealthDescriptions>`,
  );
}

export interface HealthReportProxy {
  port: number;
  close(): Promise<void>;
}

export async function startHealthReport(
  emulator: string,
  source: TargetHealthSource,
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
            text = rewriteTargetHealth(
              text,
              (id, port) => source.stateOfTarget(group, id, port),
              // Only for the whole group: asked of given targets, ELBv2 answers for those alone.
              params.has("Targets.member.1.Id") ? [] : source.drainingIn(group),
            );
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
