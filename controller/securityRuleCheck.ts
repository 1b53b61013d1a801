// The security-rule check, run by the leading controller about once a minute (--security-rule-check-period):
// security rules decide who reaches a Service, and one revoked by hand used to stay revoked until a resync (Azure,
// ten minutes) or a full observation (AWS, an hour) while the Service said it was serving. The provider compares
// every Service's rules with the cloud at once and restores what Services share; each Service found changed gets
// a Warning Event naming the rules, and is returned to be reconciled at once, which restores its own.
import type { V1Service } from "@kubernetes/client-node";
import { withPriority } from "../providers/priority.ts";
import type { LoadBalancerProvider, SecurityRuleDrift } from "../providers/provider.ts";
import type { EventSink } from "../shared/events.ts";
import type { Logger } from "../shared/log.ts";

export const SECURITY_RULES_CHANGED = "SecurityRulesChanged";

export async function checkSecurityRules(opts: {
  provider: LoadBalancerProvider;
  /** The Service in the controller's cache under `namespace/name`. */
  service: (key: string) => V1Service | undefined;
  events: EventSink;
  log: Logger;
}): Promise<{ drifted: SecurityRuleDrift[]; reconcile: string[] }> {
  // Nothing asked for it: its cloud calls wait behind changes users wait for.
  const drifted = await withPriority("background", () => opts.provider.checkSecurityRules?.() ?? []);
  const reconcile = new Set<string>();
  for (const d of drifted) {
    const key = `${d.service.namespace}/${d.service.name}`;
    opts.log.warn(
      { service: key, differences: d.differences, restored: d.restored },
      "security rules changed outside Portico",
    );
    const svc = opts.service(key);
    // Gone, or replaced by another Service of the same name since: its own pass or deletion takes over.
    if (svc?.metadata?.uid !== d.service.uid) continue;
    await opts.events.record(svc, "Warning", SECURITY_RULES_CHANGED, message(d));
    if (!d.restored) reconcile.add(key);
  }
  return { drifted, reconcile: [...reconcile] };
}

function message(d: SecurityRuleDrift): string {
  const shown = d.differences.slice(0, 5).join("; ");
  const more = d.differences.length > 5 ? ` and ${d.differences.length - 5} more` : "";
  return (
    `security rules Portico made were changed outside it: ${shown}${more}; ` +
    (d.restored ? "restored" : "restoring them now")
  );
}
