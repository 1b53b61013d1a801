// Which interfaces a speaker announces on. By default every Ethernet interface, except the ones
// container networking creates (answering ARP on a pod's veth or a CNI bridge would leak the address into
// places it does not belong); an explicit list replaces the default.
export const DEFAULT_EXCLUDED_INTERFACES: readonly string[] = [
  "lo",
  "veth*",
  "docker*",
  "cni*",
  "flannel*",
  "cali*",
  "kube-ipvs*",
  "cilium*",
];

export interface InterfaceSelection {
  /** Names or globs ("eth*", "bond0.100"); empty means every interface. */
  readonly include: readonly string[];
  /** Names or globs never used, unless named exactly (no glob) in `include`. */
  readonly exclude: readonly string[];
}

export interface CandidateInterface {
  readonly name: string;
  readonly loopback: boolean;
  readonly ethernet: boolean;
}

/** Shell-style glob with `*` and `?`, matched against the whole name. */
export function matchesGlob(name: string, pattern: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${regex}$`).test(name);
}

/**
 * The interfaces to open, in the order given: Ethernet only (ARP and NDP over Ethernet are what the speaker
 * speaks). An interface that is down is still opened: its socket starts receiving when the link comes up.
 */
export function selectInterfaces<T extends CandidateInterface>(
  available: readonly T[],
  selection: InterfaceSelection,
): T[] {
  const named = new Set(selection.include.filter((pattern) => !/[*?]/.test(pattern)));
  return available.filter((candidate) => {
    if (candidate.loopback || !candidate.ethernet) return false;
    if (named.has(candidate.name)) return true;
    const included =
      selection.include.length === 0 || selection.include.some((p) => matchesGlob(candidate.name, p));
    return included && !selection.exclude.some((p) => matchesGlob(candidate.name, p));
  });
}
