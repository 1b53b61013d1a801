// Reading request bodies the way ARM's JSON deserializer does: a wrong type or an unknown enum value is an
// InvalidRequestFormat error whose detail names the JSON path, and enum values match case-insensitively but come
// back in their canonical casing. Tags are checked against ARM's rules as they are read.
import { invalidJson, missingReferenceId } from "./errors.ts";
import { assertQualifiedId } from "./ids.ts";
import { assertValidTags } from "./tags.ts";

export type Json = Record<string, unknown>;

export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidJson(
      `Unexpected character encountered while parsing value. Path '', ${(err as Error).message}.`,
    );
  }
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A view of one JSON object in the request body that knows its own path, for error messages. */
export class BodyObject {
  readonly value: Json;
  readonly path: string;

  constructor(value: Json, path: string) {
    this.value = value;
    this.path = path;
  }

  static root(value: unknown): BodyObject {
    if (value === undefined) return new BodyObject({}, "");
    if (!isObject(value))
      throw invalidJson("Cannot deserialize the current JSON value into an object. Path ''.");
    return new BodyObject(value, "");
  }

  pathOf(key: string): string {
    return this.path ? `${this.path}.${key}` : key;
  }

  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  object(key: string): BodyObject | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v))
      throw invalidJson(
        `Error converting value ${JSON.stringify(v)} to an object. Path '${this.pathOf(key)}'.`,
      );
    return new BodyObject(v, this.pathOf(key));
  }

  /** The `properties` envelope; an absent one reads as empty. */
  properties(): BodyObject {
    return this.object("properties") ?? new BodyObject({}, this.pathOf("properties"));
  }

  array(key: string): BodyObject[] | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v))
      throw invalidJson(
        `Error converting value ${JSON.stringify(v)} to an array. Path '${this.pathOf(key)}'.`,
      );
    return v.map((item: unknown, i) => {
      const path = `${this.pathOf(key)}[${i}]`;
      if (!isObject(item))
        throw invalidJson(`Error converting value ${JSON.stringify(item)} to an object. Path '${path}'.`);
      return new BodyObject(item, path);
    });
  }

  strings(key: string): string[] | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string"))
      throw invalidJson(
        `Error converting value ${JSON.stringify(v)} to type 'System.String[]'. Path '${this.pathOf(key)}'.`,
      );
    return v as string[];
  }

  string(key: string): string | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string")
      throw invalidJson(
        `Error converting value ${JSON.stringify(v)} to type 'System.String'. Path '${this.pathOf(key)}'.`,
      );
    return v;
  }

  integer(key: string): number | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "number" && Number.isInteger(v)) return v;
    if (typeof v === "string" && /^-?\d+$/.test(v)) return Number(v);
    throw invalidJson(
      `Could not convert string to integer: ${JSON.stringify(v)}. Path '${this.pathOf(key)}'.`,
    );
  }

  boolean(key: string): boolean | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean")
      throw invalidJson(
        `Could not convert string to boolean: ${JSON.stringify(v)}. Path '${this.pathOf(key)}'.`,
      );
    return v;
  }

  enumValue<T extends string>(key: string, allowed: readonly T[], typeName: string): T | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    const match = allowed.find((a) => a.toLowerCase() === v.toLowerCase());
    if (!match)
      throw invalidJson(`Error converting value "${v}" to type '${typeName}'. Path '${this.pathOf(key)}'.`);
    return match;
  }

  /** A `{ "id": ... }` reference: ARM wants the id present and fully qualified. */
  reference(key: string): string | undefined {
    const ref = this.object(key);
    if (!ref) return undefined;
    const id = ref.string("id");
    if (id === undefined || id === "") throw missingReferenceId(ref.path);
    assertQualifiedId(id, ref.pathOf("id"));
    return id;
  }

  references(key: string): string[] | undefined {
    return this.array(key)?.map((ref) => {
      const id = ref.string("id");
      if (id === undefined || id === "") throw missingReferenceId(ref.path);
      assertQualifiedId(id, ref.pathOf("id"));
      return id;
    });
  }

  tags(): Record<string, string> {
    const tags = this.object("tags");
    if (!tags) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(tags.value)) {
      if (typeof v !== "string")
        throw invalidJson(
          `Error converting value ${JSON.stringify(v)} to type 'System.String'. Path 'tags.${k}'.`,
        );
      out[k] = v;
    }
    assertValidTags(out);
    return out;
  }
}
