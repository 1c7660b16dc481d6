// What a request leaves in the store (docs/semantics.md "Requests", decision 70). A request is a
// message of the event `$request:<name>` (`events.deliver`: stored and the run woken in one write,
// numbered like every message, idempotent by key) and one stream of the run, `$request:<id>`, whose
// entries are positional and written once each: entry 0 says who came first, the workflow taking
// the request (`received`) or the caller giving up at its timeout (`withdrawn`); entry 1 is the
// reply. The store's "first write at an index wins" is the one compare-and-set that decides between
// a receipt and a timeout, whatever process each runs in.
import { createHash } from 'node:crypto';
import { CairnError } from '../../errors/cairn-error.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { Json } from '../../model/json.js';
import type { StreamEntry } from '../../model/stream.js';
import type { StreamStore, WorkflowStore } from '../../store/workflow-store.js';
import { REQUEST_EVENT_PREFIX } from '../define/event-definition.js';

/** The message a request travels as: its id (naming its stream) and the payload. */
export interface RequestMessage {
  id: string;
  payload: Json;
}

/** Entry 0 of a request's stream when the workflow took the request. */
export const RECEIVED = 'received';
/** Entry 0 of a request's stream when the caller gave up first: no workflow ever sees the request. */
export const WITHDRAWN = 'withdrawn';

/** Entry 1 of a request's stream: the reply, or the workflow's refusal (`reject`). */
export type RequestReply = { ok: true; value: Json } | { ok: false; error: ErrorRecord };

/** The prefix of the streams that hold requests' receipts and replies (hidden from `listStreams`, refused by `ctx.emit`). */
export const REQUEST_STREAM_PREFIX = '$request:';

/** The event request `name` travels as. */
export function requestEventName(name: string): string {
  return REQUEST_EVENT_PREFIX + name;
}

/** The stream of request `id`. */
export function requestStreamName(id: string): string {
  return REQUEST_STREAM_PREFIX + id;
}

/**
 * The idempotency key of the message a request with `key` travels as. Message keys are unique per
 * run whatever the name, so the key names the request too (the same key on another request name is
 * another request), hashed to a fixed length that fits the store's key column; the prefix keeps it
 * apart from the keys of `sendEvent`.
 */
export function requestMessageKey(name: string, key: string): string {
  return `${REQUEST_EVENT_PREFIX}${createHash('sha256')
    .update(JSON.stringify([name, key]))
    .digest('base64url')}`;
}

/** The store's streams, which requests need (`REQUEST_UNSUPPORTED` without them). */
export function requestStreams(store: WorkflowStore, what: string): StreamStore {
  if (store.streams === undefined) {
    throw new CairnError('REQUEST_UNSUPPORTED', `${what}: the store ${store.name} has no streams, which requests are kept in`, { data: { store: store.name } });
  }
  return store.streams;
}

/** Reads the message of a request back (it was written by `engine.request`, never by `sendEvent`: that name is reserved). */
export function requestMessage(payload: Json | undefined): RequestMessage {
  const message = payload as Partial<RequestMessage> | null | undefined;
  if (typeof message !== 'object' || message === null || typeof message.id !== 'string') {
    throw new CairnError(
      'STORE_ERROR',
      'a request message without its id: the store holds a message of a reserved event name that engine.request did not write',
    );
  }
  return { id: message.id, payload: message.payload ?? null };
}

/** Entry 0 of a request's stream, as read: `received`, `withdrawn`, or `undefined` when neither happened yet. */
export function receiptOf(entries: readonly StreamEntry[]): typeof RECEIVED | typeof WITHDRAWN | undefined {
  const first = entries.find((e) => e.index === 0 && e.closed !== true);
  if (first === undefined) return undefined;
  return first.data === WITHDRAWN ? WITHDRAWN : RECEIVED;
}

/** Entry 1 of a request's stream, as read, or `undefined` before the reply. */
export function replyOf(entries: readonly StreamEntry[]): RequestReply | undefined {
  const second = entries.find((e) => e.index === 1 && e.closed !== true);
  return second === undefined ? undefined : (second.data as RequestReply);
}
