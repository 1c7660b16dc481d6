/**
 * Field-name encoding for user-chosen keys (step keys, state keys, event names).
 *
 * These keys become field names inside the run document (`steps.<field>`, `state.<field>`,
 * `events.<field>`), and MongoDB (and FerretDB, more strictly) forbid a lot in a field name on an
 * update path: `.` splits paths, a leading `$` is an operator, the empty string is refused, NUL
 * cannot be stored, FerretDB refuses leading/trailing whitespace, a purely numeric element can be
 * read as an array index, and a lone UTF-16 surrogate cannot survive the UTF-8 round trip. So:
 *
 * - every field starts with the marker `k` (never empty, never `$`, never numeric);
 * - ASCII letters, digits, `_`, `-`, `#`, and well-formed Unicode letters and digits are kept as is
 *   (so `charge#2` is stored as `kcharge#2` and stays readable in a database browser);
 * - every other UTF-16 code unit, `%` included, becomes `%` + four upper-case hex digits.
 *
 * Decoding reverses exactly that, so any JavaScript string (lone surrogates, 10 000 characters,
 * keys that already look encoded) round-trips byte for byte.
 */

const MARKER = 'k';
const SAFE = /^[A-Za-z0-9_#\-\p{L}\p{N}]$/u;
const ESCAPE = /%([0-9A-F]{4})/g;

/** Encodes any string key into a field name that is safe on an update path. */
export function encodeKey(key: string): string {
  let out = MARKER;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    // A well-formed surrogate pair is one code point: test it as a whole.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < key.length) {
      const next = key.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        const pair = key.slice(i, i + 2);
        out += SAFE.test(pair) ? pair : escapeUnit(unit) + escapeUnit(next);
        i++;
        continue;
      }
    }
    const char = key[i] as string;
    out += unit < 0xd800 || unit > 0xdfff ? (SAFE.test(char) ? char : escapeUnit(unit)) : escapeUnit(unit);
  }
  return out;
}

/** Decodes a field name made by `encodeKey`; throws on anything else (a corrupted document). */
export function decodeKey(field: string): string {
  if (!field.startsWith(MARKER)) throw new TypeError(`Not an encoded Cairn key: ${JSON.stringify(field)}`);
  return field.slice(MARKER.length).replace(ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function escapeUnit(unit: number): string {
  return `%${unit.toString(16).toUpperCase().padStart(4, '0')}`;
}
