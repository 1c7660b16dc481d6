import { createHash } from 'node:crypto';

/**
 * A key's slots (`<prefix>slots`, `_id` = `keyId(key)`): its holders in one document, so that one
 * conditional update sees them all. `h` holds at most `limit` entries.
 */
export interface SlotKeyDoc {
  _id: string;
  /** The key as given (every filter compares it beside `_id`). */
  key: string;
  /** Bumped by every write: the compare-and-set token of the slow path. */
  v: number;
  /** Holder (field-encoded, `encodeKey`) → `expiresAt`; an expired entry stays its holder's until taken over. */
  h: Record<string, number>;
  /** How many entries `h` has (the fast path's `n < limit`). */
  n: number;
  /**
   * At least the number of waiter documents of the key: raised before one is inserted, lowered
   * after one is deleted. 0 lets a request take a free slot in one command (nobody can be ahead).
   */
  wn: number;
}

/** A waiter of a key (`<prefix>slot_waiters`), `_id` `<keyId>#<sha of holder>`: one entry per holder. */
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

/** A key's lock (`<prefix>slot_locks`, `_id` = `keyId`), deleted by its owner, free once `expiresAt <= now`. */
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
