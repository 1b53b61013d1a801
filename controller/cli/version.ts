// `porticoctl version`: porticoctl's own version and each running controller's, as the controller publishes it on
// its leader Lease. plan and doctor judge a Service with porticoctl's own copy of the controller's rules, so a user
// should see when the two differ; that is the one thing this command can find wrong (exit code 1).
import { VERSION } from "../version.ts";
import type { RunningController } from "./controllers.ts";
import type { Printer } from "./render.ts";

export interface ControllerVersion {
  lease: string;
  provider: string;
  loadBalancerClass: string;
  /** Absent from the Lease of a controller older than the published version. */
  version?: string;
}

export function version(printer: Printer, controllers: readonly RunningController[]): number {
  const running: ControllerVersion[] = controllers
    .filter((c) => c.fresh && c.settings)
    .map((c) => ({
      lease: `${c.lease.metadata?.namespace}/${c.lease.metadata?.name}`,
      provider: c.settings!.provider,
      loadBalancerClass: c.settings!.loadBalancerClass,
      ...(c.settings!.version ? { version: c.settings!.version } : {}),
    }));
  const differ = running.filter((c) => c.version !== VERSION);
  if (printer.structured) {
    printer.data({ porticoctl: VERSION, controllers: running });
    return differ.length ? 1 : 0;
  }
  printer.line(`porticoctl ${VERSION}`);
  if (!running.length)
    printer.line(
      "controllers: none running that this user can see (their leader Leases, in every namespace or --controller-namespace)",
    );
  for (const c of running) {
    const which = `controller ${c.lease} (${c.provider}, ${c.loadBalancerClass})`;
    if (c.version === VERSION) printer.line(`${which} ${c.version}`);
    else
      printer.line(
        printer.paint(
          `${which} ${c.version ?? "of a version that does not publish it"}: not porticoctl's ${VERSION}; ` +
            `plan and doctor judge Services as a ${VERSION} controller would`,
          "warn",
        ),
      );
  }
  return differ.length ? 1 : 0;
}
