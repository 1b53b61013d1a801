// The listeners' part of a plan, pure: each desired listener made, or moved to its target group, protocol and
// certificate, with its extra certificates and attributes; a listener on a port no longer wanted is deleted. It comes
// after the target groups are made and before those no longer used go, so a port always forwards somewhere.
import { listed, type Describers } from "../resourcePlan.ts";
import type { DesiredListener, ObservedListener, ObservedTargetGroup } from "../model.ts";
import type { ListenerOperation } from "./operations.ts";

export function planListeners(
  desired: DesiredListener[],
  observed: ObservedListener[],
  targetGroups: ObservedTargetGroup[],
): ListenerOperation[] {
  const ops: ListenerOperation[] = [];
  const groups = new Map(targetGroups.map((tg) => [tg.name, tg]));
  const byPort = new Map(observed.map((l) => [l.port, l]));
  for (const listener of desired) {
    const existing = byPort.get(listener.port);
    if (!existing) {
      ops.push({ kind: "createListener", listener });
      continue;
    }
    if (!sameListener(existing, listener, groups.get(listener.targetGroupName)))
      ops.push({
        kind: "modifyListener",
        listenerArn: existing.arn,
        listener,
        protocolNow: existing.protocol,
      });
    ops.push(...detailOps(existing, listener));
  }
  const wantedPorts = new Set(desired.map((l) => l.port));
  for (const l of observed)
    if (!wantedPorts.has(l.port)) ops.push({ kind: "deleteListener", listenerArn: l.arn, port: l.port });
  return ops;
}

function sameListener(
  observed: ObservedListener,
  desired: DesiredListener,
  tg: ObservedTargetGroup | undefined,
): boolean {
  return (
    observed.protocol === desired.protocol &&
    tg !== undefined &&
    observed.targetGroupArn === tg.arn &&
    observed.certificateArns[0] === desired.certificateArns[0] &&
    (desired.sslPolicy === undefined || observed.sslPolicy === desired.sslPolicy) &&
    // A TLS listener without the annotation goes back to no ALPN ("None"), as ELBv2 makes it.
    (desired.protocol !== "TLS" || (observed.alpnPolicy ?? "None") === (desired.alpnPolicy ?? "None"))
  );
}

/** The certificates beyond the default one, and the listener's attributes the Service sets. */
function detailOps(observed: ObservedListener, desired: DesiredListener): ListenerOperation[] {
  const ops: ListenerOperation[] = [];
  const base = { listenerArn: observed.arn, port: observed.port };
  const want = desired.certificateArns.slice(1).filter((c) => c !== desired.certificateArns[0]);
  const have = observed.certificateArns.slice(1);
  const add = want.filter((c) => !have.includes(c));
  // The listener's new default certificate, once ModifyListener set it, is no extra to remove.
  const remove = have.filter((c) => !want.includes(c) && c !== desired.certificateArns[0]);
  if (add.length) ops.push({ kind: "addListenerCertificates", ...base, certificateArns: add });
  if (remove.length) ops.push({ kind: "removeListenerCertificates", ...base, certificateArns: remove });
  const attributes = Object.fromEntries(
    Object.entries(desired.attributes).filter(([k, v]) => observed.attributes[k] !== v),
  );
  if (Object.keys(attributes).length) ops.push({ kind: "modifyListenerAttributes", ...base, attributes });
  return ops;
}

export const listenerDescriptions: Describers<ListenerOperation> = {
  createListener: (op) =>
    `create ${op.listener.protocol} listener on port ${op.listener.port} -> ${op.listener.targetGroupName}`,
  modifyListener: (op) =>
    `change listener on port ${op.listener.port} to ${op.listener.protocol} -> ${op.listener.targetGroupName}`,
  addListenerCertificates: (op) =>
    `add certificates ${op.certificateArns.join(", ")} to the listener on port ${op.port}`,
  removeListenerCertificates: (op) =>
    `remove certificates ${op.certificateArns.join(", ")} from the listener on port ${op.port}`,
  modifyListenerAttributes: (op) =>
    `set attributes of the listener on port ${op.port}: ${listed(op.attributes)}`,
  deleteListener: (op) => `delete listener on port ${op.port}`,
};
