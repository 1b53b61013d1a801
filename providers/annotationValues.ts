// Reading values out of Service annotations, shared by the providers: each failure is a ConfigurationError
// that names the annotation and says how to write the value instead.
import { ConfigurationError } from "./errors.ts";

export function invalidAnnotation(annotation: string, problem: string, fix: string): never {
  throw new ConfigurationError("InvalidAnnotation", `metadata.annotations[${annotation}]`, problem, fix);
}

export function oneOf<T extends string>(annotation: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    invalidAnnotation(annotation, `"${value}" is not allowed`, `use one of ${allowed.join(", ")}`);
  }
  return value as T;
}

/** "true" or "false" in any case; undefined when the annotation is absent. */
export function optionalBool(annotation: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value.toLowerCase() === "true") return true;
  if (value.toLowerCase() === "false") return false;
  return invalidAnnotation(annotation, `"${value}" is not a boolean`, 'use "true" or "false"');
}

export function wholeNumber(annotation: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    invalidAnnotation(
      annotation,
      `"${value}" is not a whole number from ${min} to ${max}`,
      `give a number from ${min} to ${max}`,
    );
  }
  return n;
}

/** A comma-separated list, trimmed, without empty items. */
export function splitList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Comma-separated `key=value` pairs; `checkKey` may refuse a key (it throws). */
export function keyValuePairs(
  annotation: string,
  value: string | undefined,
  checkKey?: (key: string) => void,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of splitList(value)) {
    const i = pair.indexOf("=");
    if (i <= 0)
      invalidAnnotation(annotation, `"${pair}" is not key=value`, "write comma-separated key=value pairs");
    const key = pair.slice(0, i).trim();
    checkKey?.(key);
    out[key] = pair.slice(i + 1).trim();
  }
  return out;
}
