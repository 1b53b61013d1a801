// How the edge spreads new flows over targets, as kube-proxy does: each rule of a chain takes its share of what
// the rules before it left (1/n, then 1/(n-1), ...), the last takes the rest, so every target gets an equal share.
// Pure.

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
