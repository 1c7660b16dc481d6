import type { Json } from './json.js';

/**
 * An error as the store keeps it: plain JSON, so it survives a round trip through any backend.
 * The engine turns thrown errors into this shape and back (see `toErrorRecord`).
 */
export interface ErrorRecord {
  /** The error's class name, e.g. `TypeError`, or `CairnError`. */
  name: string;
  /** The error message. */
  message: string;
  /** The `CairnError` code when the error carried one. */
  code?: string;
  /** The stack trace captured when the error was recorded, if any. */
  stack?: string;
  /** Extra JSON data a `CairnError` carried. */
  data?: Json;
  /** The recorded cause, if the error had one. */
  cause?: ErrorRecord;
}
