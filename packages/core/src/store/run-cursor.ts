import { CairnError } from '../errors/cairn-error.js';

/** The position after which `runs.list` continues: the last run of the previous page. */
export interface RunCursor {
  createdAt: number;
  id: string;
}

/** Encodes a list position as an opaque string (shared by every backend). */
export function encodeRunCursor(cursor: RunCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');
}

/** Decodes `encodeRunCursor`'s output; throws `INVALID_INPUT` on anything else. */
export function decodeRunCursor(value: string): RunCursor {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && typeof parsed[0] === 'number' && typeof parsed[1] === 'string') {
      return { createdAt: parsed[0], id: parsed[1] };
    }
  } catch {
    // fall through to the typed error below
  }
  throw new CairnError('INVALID_INPUT', `Invalid runs cursor: ${JSON.stringify(value)}`);
}

/** Validates and normalises a `RunQuery.limit` (default 50, 1..1000). */
export function normaliseListLimit(limit: number | undefined): number {
  if (limit === undefined) return 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new CairnError('INVALID_INPUT', `runs.list limit must be an integer in 1..1000, got ${limit}`);
  }
  return limit;
}
