// How the edge spreads new flows over targets, as kube-proxy does: each rule of a chain takes its share of what
// the rules before it left (1/n, then 1/(n-1), ...), the last takes the rest, so every target gets an equal share;
// and, for source-IP affinity (ELBv2's stickiness, Azure's SourceIP distribution), how a client seen before goes
// back to its target, as kube-proxy keeps ClientIP affinity: with the kernel's `recent` lists. Pure.
import { shortHash } from "./checkPlan.ts";

/** iptables rules appending to `chain`: the i-th target's share jumps to `action(i)`. */
export function spreadRules(
  chain: string,
  match: string,
  count: number,
  action: (i: number) => string,
): string[] {
  return Array.from({ length: count }, (_, i) => {
    const left = count - i;
    const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : "";
    return `-A ${chain}${match ? ` ${match}` : ""}${pick} ${action(i)}`;
  });
}

/**
 * Spreading with source-IP affinity: a source some target's list holds goes to that target again (while it is one
 * of the `count`), a new one is spread and added to the list of the target it went to. `key(i)` names the i-th
 * target stably (its list is shared by every chain given the same key); `action(i)` sends to it.
 */
export function stickySpreadRules(
  chain: string,
  match: string,
  count: number,
  key: (i: number) => string,
  action: (i: number) => string,
): { chains: string[]; rules: string[] } {
  const m = match ? ` ${match}` : "";
  const sub = (i: number) => `${chain}-${shortHash(key(i))}`.toUpperCase().slice(0, 28);
  const list = (i: number) => `st${shortHash(key(i))}`;
  const targets = Array.from({ length: count }, (_, i) => i);
  return {
    chains: targets.map((i) => `:${sub(i)} - [0:0]`),
    rules: [
      ...targets.map((i) => `-A ${chain}${m} -m recent --name ${list(i)} --rcheck --rsource -j ${sub(i)}`),
      ...targets.flatMap((i) => [
        `-A ${sub(i)} -m recent --name ${list(i)} --set --rsource`,
        `-A ${sub(i)}${m} ${action(i)}`,
      ]),
      ...spreadRules(chain, match, count, (i) => `-j ${sub(i)}`),
    ],
  };
}
