import type { Json } from './json.js';

/**
 * A message sent to a run. Every send of a name is kept: `seq` numbers the messages of one
 * (run, name) 1, 2, 3, ... in the order the store accepted them, with no gaps.
 */
export interface EventRecord {
  runId: string;
  name: string;
  /** The message's position among the messages of this name sent to this run, from 1. */
  seq: number;
  payload: Json;
  deliveredAt: number;
  /** The idempotency key the send carried, if any. */
  idempotencyKey?: string;
}

/** Options of `EventStore.deliver`. */
export interface DeliverOptions {
  /**
   * Makes the send idempotent per run: a later send to the same run with the same key (whatever
   * its name or payload) stores nothing and reports `duplicate: true`.
   */
  idempotencyKey?: string;
}

/**
 * What a send did.
 * - `{ delivered: true, duplicate: false, seq }`: stored as message `seq` of its name; the run was woken.
 * - `{ delivered: false, duplicate: true, seq }`: a send with the same idempotency key was stored
 *   before (as message `seq` of its name); nothing was written.
 * - `{ delivered: false, duplicate: false }`: the run has ended; nothing was written.
 */
export type EventDelivery =
  | { delivered: true; duplicate: false; seq: number }
  | { delivered: false; duplicate: true; seq: number }
  | { delivered: false; duplicate: false };
