import { IDENTIFIER_LIMITS } from '../check-input.js';
import { REQUEST_STREAM_PREFIX } from './request-records.js';

/** The prefix of the streams that hold a run's exposed values (`ctx.expose`, `engine.query`). */
export const QUERY_STREAM_PREFIX = '$query:';

/** The longest query name: its stream `$query:<name>` must fit a stream name. */
export const MAX_QUERY_NAME = IDENTIFIER_LIMITS.stepName - QUERY_STREAM_PREFIX.length;

/** The stream of query `name`. */
export function queryStreamName(name: string): string {
  return QUERY_STREAM_PREFIX + name;
}

/**
 * Whether a stream name belongs to the engine (requests' receipts and replies, exposed values):
 * `ctx.emit` refuses such names and `engine.listStreams` leaves them out.
 */
export function isReservedStream(stream: string): boolean {
  return stream.startsWith(REQUEST_STREAM_PREFIX) || stream.startsWith(QUERY_STREAM_PREFIX);
}
