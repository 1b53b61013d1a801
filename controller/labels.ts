// Label selectors in the "k=v,k2=v2" / "k in (a,b)" / "!k" text form that kubectl and annotations use.

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

/**
 * Parses a label selector string. Supports equality (`k=v`, `k==v`, `k!=v`), set (`k in (a,b)`,
 * `k notin (a,b)`) and existence (`k`, `!k`) requirements, comma-separated (all must hold).
 * Throws an Error naming the bad requirement.
 */
export function parseLabelSelector(selector: string): LabelMatcher {
  const requirements = splitRequirements(selector.trim());
  const tests = requirements.map(parseRequirement);
  return (labels = {}) => tests.every((t) => t(labels));
}

function splitRequirements(selector: string): string[] {
  if (!selector) return [];
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of selector) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += ch;
  }
  parts.push(current.trim());
  return parts;
}

const KEY = String.raw`[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;

function parseRequirement(req: string): (labels: Record<string, string>) => boolean {
  let m = new RegExp(`^(${KEY})\\s*(!=|==|=)\\s*(${VALUE})$`).exec(req);
  if (m) {
    const [key, op, value] = [m[1]!, m[3]!, m[4] ?? ""];
    return op === "!=" ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  m = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(req);
  if (m) {
    const [key, op] = [m[1]!, m[3]!];
    const values = new Set(m[4]!.split(",").map((v) => v.trim()));
    return op === "in" ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l && values.has(l[key]!));
  }
  m = new RegExp(`^(!?)\\s*(${KEY})$`).exec(req);
  if (m) {
    const [negate, key] = [m[1] === "!", m[2]!];
    return negate ? (l) => !(key in l) : (l) => key in l;
  }
  throw new Error(`invalid label selector requirement "${req}"`);
}
