import { CairnError } from '../errors/cairn-error.js';

/** The position after which `runs.listEnded` continues: the last run of the previous batch. */
export interface EndedCursor {
  /** The time the backend orders by (`updatedAt`; Redis: `createdAt`). */
  at: number;
  id: string;
}

/** Encodes a `listEnded` position as an opaque string (shared by every backend). */
export function encodeEndedCursor(cursor: EndedCursor): string {
  return Buffer.from(JSON.stringify(['ended', cursor.at, cursor.id]), 'utf8').toString('base64url');
}

/** Decodes `encodeEndedCursor`'s output; throws `INVALID_INPUT` on anything else. */
export function decodeEndedCursor(value: string): EndedCursor {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed[0] === 'ended' && typeof parsed[1] === 'number' && typeof parsed[2] === 'string')
      return { at: parsed[1], id: parsed[2] };
  } catch {
    // fall through to the typed error below
  }
  throw new CairnError('INVALID_INPUT', `Invalid listEnded cursor: ${JSON.stringify(value)}`);
}
