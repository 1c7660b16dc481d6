import type { Json } from '../../model/json.js';

/** The key of the output a run that continued as new completes with: `{ $continuedAs: <id> }`. */
export const CONTINUED_AS = '$continuedAs';

/** The successor's id when `output` is the mark of a run that continued as new. */
export function continuedAs(output: Json | undefined): string | undefined {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return undefined;
  const keys = Object.keys(output);
  const next = (output as Record<string, Json>)[CONTINUED_AS];
  return keys.length === 1 && typeof next === 'string' ? next : undefined;
}
