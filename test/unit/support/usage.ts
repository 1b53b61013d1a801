/**
 * How a program's --help text and the options its command line accepts disagree: options accepted but not
 * listed, and names listed that the command line would refuse. `help` itself need not be listed.
 */
export function usageGaps(
  usage: string,
  accepted: readonly string[],
): { unlisted: string[]; refused: string[] } {
  const listed = new Set([...usage.matchAll(/--([a-z0-9-]+)/g)].map((m) => m[1]!));
  return {
    unlisted: accepted.filter((name) => name !== "help" && !listed.has(name)),
    refused: [...listed].filter((name) => !accepted.includes(name)),
  };
}
