// Kubernetes label selectors (metav1.LabelSelector), matched the way the API server matches them, so a
// selector copied from a MetalLB IPAddressPool selects exactly the same Services and namespaces here; and the text
// form kubectl and the flags use ("k=v,k2!=v2", "k in (a,b)", "!k"), read into the same selector.

export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

const OPERATORS: readonly string[] = ["In", "NotIn", "Exists", "DoesNotExist"];

/** An empty selector ({}) matches everything, as in Kubernetes. All terms must hold (AND). */
export function matchesLabelSelector(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    if (!matchesRequirement(requirement, labels)) return false;
  }
  return true;
}

function matchesRequirement(requirement: LabelSelectorRequirement, labels: Labels): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return present && value !== undefined && values.includes(value);
    case "NotIn":
      // Like Kubernetes: a missing key satisfies NotIn.
      return !present || value === undefined || !values.includes(value);
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
  }
}

/**
 * Checks the shape of a selector that arrived as untyped JSON. Returns one sentence per problem, each
 * naming the field under `path` and what to write instead.
 */
export function validateLabelSelector(
  raw: unknown,
  path: string,
): { selector?: LabelSelector; problems: string[] } {
  const problems: string[] = [];
  if (!isPlainObject(raw))
    return { problems: [`${path} must be an object with matchLabels and/or matchExpressions`] };
  const selector: LabelSelector = {};
  const { matchLabels, matchExpressions } = raw;
  for (const key of Object.keys(raw)) {
    if (key !== "matchLabels" && key !== "matchExpressions") {
      problems.push(`${path}.${key} is not a selector field; use matchLabels or matchExpressions`);
    }
  }
  if (matchLabels !== undefined) {
    if (!isPlainObject(matchLabels) || !Object.values(matchLabels).every((v) => typeof v === "string")) {
      problems.push(`${path}.matchLabels must map label keys to string values`);
    } else {
      selector.matchLabels = { ...(matchLabels as Record<string, string>) };
    }
  }
  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions)) {
      problems.push(`${path}.matchExpressions must be a list`);
    } else {
      selector.matchExpressions = [];
      matchExpressions.forEach((item: unknown, index) => {
        const requirement = validateRequirement(item, `${path}.matchExpressions[${index}]`, problems);
        if (requirement) selector.matchExpressions?.push(requirement);
      });
    }
  }
  return problems.length === 0 ? { selector, problems } : { problems };
}

function validateRequirement(
  raw: unknown,
  path: string,
  problems: string[],
): LabelSelectorRequirement | undefined {
  if (!isPlainObject(raw)) {
    problems.push(`${path} must be an object with key, operator and values`);
    return undefined;
  }
  const { key, operator, values } = raw;
  const before = problems.length;
  if (typeof key !== "string" || key === "") problems.push(`${path}.key must be a non-empty label key`);
  if (typeof operator !== "string" || !OPERATORS.includes(operator)) {
    problems.push(
      `${path}.operator must be one of ${OPERATORS.join(", ")} (got ${JSON.stringify(operator)})`,
    );
  }
  if (values !== undefined && (!Array.isArray(values) || !values.every((v) => typeof v === "string"))) {
    problems.push(`${path}.values must be a list of strings`);
  }
  const list = Array.isArray(values) ? (values as string[]) : [];
  if ((operator === "In" || operator === "NotIn") && list.length === 0) {
    problems.push(`${path}.values must not be empty for operator ${operator}`);
  }
  if ((operator === "Exists" || operator === "DoesNotExist") && list.length > 0) {
    problems.push(`${path}.values must be empty for operator ${operator}; remove them`);
  }
  if (problems.length > before) return undefined;
  const requirement: LabelSelectorRequirement = {
    key: key as string,
    operator: operator as LabelSelectorOperator,
  };
  if (list.length > 0) requirement.values = [...list];
  return requirement;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A selector as a function of labels (none given: no labels). */
export type LabelMatcher = (labels: Labels | undefined) => boolean;

/**
 * Reads a label selector in its text form: equality (`k=v`, `k==v`, `k!=v`), set (`k in (a,b)`,
 * `k notin (a,b)`) and existence (`k`, `!k`) requirements, comma-separated (all must hold). Throws an Error
 * naming the bad requirement.
 */
export function parseLabelSelectorText(text: string): LabelSelector {
  return { matchExpressions: splitRequirements(text.trim()).map(parseRequirement) };
}

/** The text form's matcher (parseLabelSelectorText). */
export function parseLabelSelector(text: string): LabelMatcher {
  const selector = parseLabelSelectorText(text);
  return (labels = {}) => matchesLabelSelector(selector, labels);
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

function parseRequirement(req: string): LabelSelectorRequirement {
  let m = new RegExp(`^(${KEY})\\s*(!=|==|=)\\s*(${VALUE})$`).exec(req);
  if (m) return { key: m[1]!, operator: m[3] === "!=" ? "NotIn" : "In", values: [m[4] ?? ""] };
  m = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(req);
  if (m) {
    const values = m[4]!.split(",").map((v) => v.trim());
    return { key: m[1]!, operator: m[3] === "in" ? "In" : "NotIn", values };
  }
  m = new RegExp(`^(!?)\\s*(${KEY})$`).exec(req);
  if (m) return { key: m[2]!, operator: m[1] === "!" ? "DoesNotExist" : "Exists" };
  throw new Error(`invalid label selector requirement "${req}"`);
}
