// Settings that are each valid alone but cannot work together: a source range of a family the load balancer does
// not serve, a certificate on a UDP port, a health-check path on a TCP check. Each provider keeps a table of them
// (this folder), beside the catalog of single keys: every entry names the fields a user edits, what goes wrong and
// the fix, and carries an example Service that a unit test builds and sees refused, as it does for single values.
import { ConfigurationError } from "../errors.ts";
import type { ProviderName } from "./types.ts";

export interface Combination<Input> {
  /** The fields that cannot be set together, as a user writes them: `spec.x` or `metadata.annotations[key]`. */
  readonly fields: readonly [string, string, ...string[]];
  /**
   * What goes wrong when the Service combines them, for people; undefined when it does not. Absent for the few
   * pairs the provider can only judge where it derives the setting: `checkedIn` names that file.
   */
  readonly check?: (input: Input) => string | undefined;
  /**
   * The fields the refused Service actually sets, first the one to change, where that depends on how it wrote them
   * (a per-port key for the global one, a default for a key it does not carry); `fields` otherwise.
   */
  readonly fieldsOf?: (input: Input) => readonly [string, ...string[]];
  readonly checkedIn?: string;
  readonly fix: string;
  /** The condition's reason; default ConflictingSettings (a few keep the reason they had before the table). */
  readonly reason?: string;
  /** A Service that combines them, for the test that walks the table. */
  readonly example: Example;
}

export interface Example {
  readonly annotations?: Readonly<Record<string, string>>;
  readonly spec?: Readonly<Record<string, unknown>>;
  /** Azure: the controller's multipleStandardLoadBalancerConfigurations (names), when the pair involves them. */
  readonly configurations?: readonly string[];
}

export interface CombinationTable<Input> {
  readonly provider: ProviderName;
  readonly entries: readonly Combination<Input>[];
}

export const annotationField = (key: string) => `metadata.annotations[${key}]`;

/** The first combination the input makes, as the refusal the Service gets (naming every field); undefined: none. */
export function combinationError<Input>(
  table: CombinationTable<Input>,
  input: Input,
): ConfigurationError | undefined {
  for (const entry of table.entries) {
    const problem = entry.check?.(input);
    if (problem === undefined) continue;
    const [first, ...others] = entry.fieldsOf?.(input) ?? entry.fields;
    return new ConfigurationError(
      entry.reason ?? "ConflictingSettings",
      first,
      others.length ? `${problem} (together with ${others.join(" and ")})` : problem,
      entry.fix,
    );
  }
  return undefined;
}

export function assertNoCombination<Input>(table: CombinationTable<Input>, input: Input): void {
  const err = combinationError(table, input);
  if (err) throw err;
}
