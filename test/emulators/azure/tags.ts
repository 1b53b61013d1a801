// The limits ARM documents for the tags of any resource: at most 50 per resource, names of 1-512 characters
// without `<>%&\?/` or control characters, values of at most 256 characters.
import {
  emptyTagName,
  invalidTagNameCharacters,
  invalidTagNameLength,
  invalidTagValueLength,
  tooManyTags,
} from "./errors.ts";

export const MAX_TAGS = 50;
export const MAX_TAG_NAME = 512;
export const MAX_TAG_VALUE = 256;

// eslint-disable-next-line no-control-regex -- control characters are among those ARM refuses
const RESERVED = /[<>%&\\?/\u0000-\u001f\u007f]/;

export function assertValidTags(tags: Record<string, string>): void {
  const names = Object.keys(tags);
  if (names.length > MAX_TAGS) throw tooManyTags(names.length, MAX_TAGS);
  const reserved = names.filter((n) => RESERVED.test(n));
  if (reserved.length) throw invalidTagNameCharacters(reserved);
  for (const [name, value] of Object.entries(tags)) {
    if (!name.trim()) throw emptyTagName();
    if (name.length > MAX_TAG_NAME) throw invalidTagNameLength(name, MAX_TAG_NAME);
    if (value.length > MAX_TAG_VALUE) throw invalidTagValueLength(value, MAX_TAG_VALUE);
  }
}
