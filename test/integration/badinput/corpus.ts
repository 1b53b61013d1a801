// A bad-input case: what is asked for, and the refusal it must get (see expectRefused in the harness).
import type { V1Service } from "@kubernetes/client-node";
import type { CombinationTable } from "../../../providers/annotationKeys/combinations.ts";

export interface Case {
  name: string;
  annotations?: Record<string, string>;
  spec?: Partial<NonNullable<V1Service["spec"]>>;
  reason: string;
  /** Text the message must contain: the field, and where one applies, the fix. */
  mentions: string[];
}

/** A table's combinations as cases: each example refused, its message naming every field of the pair. */
export function combinationCases<Input>(table: CombinationTable<Input>): Case[] {
  return table.entries.map((entry) => ({
    name: `together: ${entry.fields.map((f) => f.replace(/^metadata\.annotations\[(.*)\]$/, "$1")).join(" + ")}`,
    ...(entry.example.annotations ? { annotations: { ...entry.example.annotations } } : {}),
    ...(entry.example.spec ? { spec: entry.example.spec } : {}),
    reason: entry.reason ?? "ConflictingSettings",
    mentions: entry.fields.map((f) => f.replace(/^metadata\.annotations\[(.*)\]$/, "$1")),
  }));
}
