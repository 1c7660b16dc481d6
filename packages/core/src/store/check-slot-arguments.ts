import { checkIdentifier } from '../engine/check-input.js';
import { invalidInput } from '../errors/invalid-input.js';
import type { SlotRequest } from '../model/slot.js';
import { checkedCall as checked } from './checked-call.js';
import type { SlotStore } from './workflow-store.js';

/** The longest slot key or holder, in UTF-16 code units (`SlotRequest.key`). */
export const MAX_SLOT_NAME_LENGTH = 512;
/** The most slots a key may have (`SlotRequest.limit`). */
export const MAX_SLOT_LIMIT = 10_000;
/** The bound of a waiter's `priority` either way (`SlotWait.priority`), as of `RunRecord.priority`. */
export const MAX_PRIORITY = 1000;

// Keys and holders are stored as values and compared on every backend, so unlike other store
// strings they get the identifier rules of decision 22 here: a key that one backend cannot store
// exactly would make two keys one (or one key two) there.
function name(op: string, what: string, value: unknown): void {
  checkIdentifier(`${op}: ${what}`, value, MAX_SLOT_NAME_LENGTH);
}

function integer(op: string, what: string, value: unknown, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = min === Number.MIN_SAFE_INTEGER ? '' : ` from ${min} to ${max}`;
    throw invalidInput(`${op}: ${what}`, `must be an integer${range}`, value);
  }
}

/** Checks a priority (`NewRun.priority`, `SlotWait.priority`): an integer from -1000 to 1000. */
export function checkPriority(what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || Math.abs(value) > MAX_PRIORITY) {
    throw invalidInput(what, `must be an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}`, value);
  }
}

function slotRequest(op: string, value: unknown, now: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(`${op}: request`, 'must be an object', value);
  const request = value as Record<keyof SlotRequest, unknown>;
  name(op, 'request.key', request.key);
  integer(op, 'request.limit', request.limit, 1, MAX_SLOT_LIMIT);
  name(op, 'request.holder', request.holder);
  integer(op, 'request.expiresAt', request.expiresAt);
  integer(op, 'now', now);
  if (request.wait === undefined) return;
  if (typeof request.wait !== 'object' || request.wait === null || Array.isArray(request.wait))
    throw invalidInput(`${op}: request.wait`, 'must be an object', request.wait);
  const wait = request.wait as Record<string, unknown>;
  checkPriority(`${op}: request.wait.priority`, wait.priority);
  integer(op, 'request.wait.queuedAt', wait.queuedAt);
  integer(op, 'request.wait.expiresAt', wait.expiresAt);
  // A waiter entry that has lapsed already would be recorded only to be ignored.
  if ((wait.expiresAt as number) <= (now as number))
    throw invalidInput(`${op}: request.wait.expiresAt`, `must be later than now (${String(now)})`, wait.expiresAt);
}

/**
 * Returns `slots` with every method checking its arguments first: keys and holders identifiers
 * of at most 512 characters (non-empty, well-formed UTF-16, no NUL: decision 22), `limit` an
 * integer from 1 to 10,000, every time an integer (epoch ms), a wait's `priority` an integer from
 * -1000 to 1000 and its `expiresAt` later than `now`. A bad argument rejects with
 * `CairnError('INVALID_INPUT')` naming the operation and argument, before the backend reads or
 * writes anything.
 */
export function withSlotArgumentChecks(slots: SlotStore): SlotStore {
  return {
    acquire: (request, now) =>
      checked(
        () => slotRequest('slots.acquire', request, now),
        () => slots.acquire(request, now),
      ),
    renew: (key, holder, expiresAt, now) =>
      checked(
        () => {
          name('slots.renew', 'key', key);
          name('slots.renew', 'holder', holder);
          integer('slots.renew', 'expiresAt', expiresAt);
          integer('slots.renew', 'now', now);
        },
        () => slots.renew(key, holder, expiresAt, now),
      ),
    release: (key, holder, now) =>
      checked(
        () => {
          name('slots.release', 'key', key);
          name('slots.release', 'holder', holder);
          integer('slots.release', 'now', now);
        },
        () => slots.release(key, holder, now),
      ),
    inspect: (key, now) =>
      checked(
        () => {
          name('slots.inspect', 'key', key);
          integer('slots.inspect', 'now', now);
        },
        () => slots.inspect(key, now),
      ),
  };
}
