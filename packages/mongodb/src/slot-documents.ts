import { createHash } from 'node:crypto';

/**
 * One slot of a key (`<prefix>slots`), created the first time it is taken: `_id` is
 * `<k>#<idx>`, so of racing creators of one slot exactly one inserts it.
 */
export interface SlotDoc {
  _id: string;
  /** `keyId(key)`: every query of the key filters on it. */
  k: string;
  /** The key as given (compared too, beside `k`). */
  key: string;
  /** 0 .. limit - 1: a request for `limit` slots only looks at slots below it. */
  idx: number;
  /** The holder, or null when released (never taken: the document does not exist). */
  holder: string | null;
  /** Epoch ms; 0 when released. The slot is free when `holder` is null or `expiresAt <= now`. */
  expiresAt: number;
}

/** A waiter of a key (`<prefix>slot_waiters`), `_id` `<k>#<sha of holder>`: one entry per holder. */
export interface SlotWaiterDoc {
  _id: string;
  k: string;
  key: string;
  /** The holder: the server orders strings by their UTF-8 bytes, which is the contract's code point order. */
  holder: string;
  priority: number;
  queuedAt: number;
  expiresAt: number;
}

/** A key's lock (`<prefix>slot_locks`, `_id` = `k`), deleted by its owner, free once `expiresAt <= now`. */
export interface SlotLockDoc {
  _id: string;
  owner: string;
  expiresAt: number;
}

const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url');

/**
 * The fixed-length id of a key (SHA-256, 43 characters): keys are up to 512 characters, 1.5 KiB of
 * UTF-8, more than an index key may hold on servers before MongoDB 4.2. Filters compare the full
 * `key` beside it.
 */
export const keyId = (key: string): string => sha(key);

/** The `_id` of a waiter entry of `holder` on the key with id `k`. */
export const waiterId = (k: string, holder: string): string => `${k}#${sha(holder)}`;
