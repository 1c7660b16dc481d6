import { CairnError } from '../errors/cairn-error.js';
import { invalidInput } from '../errors/invalid-input.js';
import type { RunTags } from '../model/run.js';

// String.prototype.isWellFormed (Node 20+) is not in the ES2023 lib typings this package uses.
const isWellFormed = (value: string): boolean => (value as unknown as { isWellFormed(): boolean }).isWellFormed();

// The identifier rules of `checkIdentifier` (check-input.ts, which imports this file for
// `listRuns`): a string, well-formed UTF-16, no NUL; lengths are checked by the caller.
function checkTagText(what: string, value: unknown, allowEmpty: boolean): void {
  if (typeof value !== 'string') throw invalidInput(what, 'must be a string', value);
  if (value.length === 0 && !allowEmpty) throw invalidInput(what, 'must not be empty', value);
  if (!isWellFormed(value)) throw invalidInput(what, 'must be well-formed UTF-16 (it contains a lone surrogate)', value);
  if (value.includes('\u0000')) throw invalidInput(what, 'must not contain the NUL character (U+0000)', value);
}

/**
 * The bounds of a run's tags, the same on every backend: at most `maxTags` keys per run (after
 * every `ctx.setTags`), keys of 1..`maxKeyLength` and values of 0..`maxValueLength` UTF-16 code
 * units. They keep the SQL tag index within MariaDB's key size and a Redis key short.
 */
export const TAG_LIMITS = { maxTags: 16, maxKeyLength: 64, maxValueLength: 256 } as const;

/**
 * Checks tags given to `startRun`, `ctx.setTags` or `listRuns` and returns a copy (own keys only,
 * `__proto__` kept as a key): a plain object of at most `TAG_LIMITS.maxTags` entries whose keys
 * are non-empty identifiers of at most `maxKeyLength` characters and whose values are strings of
 * at most `maxValueLength` (empty allowed); every key and value well-formed UTF-16 without NUL
 * (which PostgreSQL text cannot hold). Throws `INVALID_INPUT` for a value of the wrong shape and
 * `TAG_LIMIT` past a bound; reads and writes nothing.
 */
export function checkTags(what: string, value: unknown): RunTags {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(what, 'must be an object of string values', value);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) throw invalidInput(what, 'must be a plain object of string values', value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > TAG_LIMITS.maxTags) throw tagLimit(what, `must hold at most ${TAG_LIMITS.maxTags} tags (it has ${entries.length})`);
  const out: RunTags = {};
  for (const [key, tag] of entries) {
    if (key.length > TAG_LIMITS.maxKeyLength)
      throw tagLimit(what, `keys must be at most ${TAG_LIMITS.maxKeyLength} characters (${JSON.stringify(key.slice(0, 20))}… has ${key.length})`);
    checkTagText(`${what} key`, key, false);
    if (typeof tag === 'string' && tag.length > TAG_LIMITS.maxValueLength) {
      throw tagLimit(what, `values must be at most ${TAG_LIMITS.maxValueLength} characters (the value of ${JSON.stringify(key)} has ${tag.length})`);
    }
    checkTagText(`${what} value of ${JSON.stringify(key)}`, tag, true);
    // Defined, not assigned: assigning '__proto__' would set the copy's prototype instead.
    Object.defineProperty(out, key, { value: tag, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `TAG_LIMIT` for `what`: the problem named, nothing written. */
export function tagLimit(what: string, problem: string): CairnError {
  return new CairnError('TAG_LIMIT', `${what} ${problem}`, { data: { argument: what, limits: { ...TAG_LIMITS } } });
}

/** `TAGS_UNSUPPORTED`: the store keeps no tags (it has no `runs.setTags`). */
export function tagsUnsupported(what: string, store: string): CairnError {
  return new CairnError('TAGS_UNSUPPORTED', `${what}: the store ${store} keeps no tags (it has no runs.setTags)`, { data: { store } });
}

/** The keys `tags` adds to `current` (the run's tags): the count check of a tag write. */
export function mergedTagCount(current: RunTags | undefined, tags: RunTags): number {
  const keys = new Set(Object.keys(current ?? {}));
  for (const key of Object.keys(tags)) keys.add(key);
  return keys.size;
}
