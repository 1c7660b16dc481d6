import { CairnError } from './cairn-error.js';

// How much of a refused value an error message quotes.
const SHOWN_CHARS = 80;

/**
 * A refused value as text for a message: strings as JSON (which escapes lone surrogates and NUL,
 * so the message itself stays well-formed), objects as JSON, the rest by `String`. Never throws.
 */
export function describeValue(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'undefined';
  else if (typeof value === 'string') text = JSON.stringify(value);
  else if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function')
    text = typeof value === 'function' ? 'a function' : String(value);
  else if (value instanceof String) text = `a String object ${JSON.stringify(value.valueOf())}`;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 1)}…` : text;
}

/** The `INVALID_INPUT` error for argument `what`, quoting the value it got. */
export function invalidInput(what: string, problem: string, value: unknown): CairnError {
  const shown = describeValue(value);
  return new CairnError('INVALID_INPUT', `${what} ${problem}, got ${shown}`, { data: { argument: what, value: shown } });
}
