import { CairnError } from '@cairn/core';
import { checkSendOptions, type CheckedSendOptions, type GroupConcurrency, type SendOptions } from '@cairn/core/backend';

// pg-boss keeps priority in an int4 column; Cairn's contract is "higher runs sooner", which is also
// pg-boss's order, so any 32-bit integer passes through unchanged.
const MIN_PRIORITY = -2_147_483_648;
const MAX_PRIORITY = 2_147_483_647;

/** Throws `INVALID_INPUT` unless `queue` is a name pg-boss accepts. */
export function checkQueueName(queue: unknown): asserts queue is string {
  // pg-boss refuses any other character with a plain assertion error; say it in Cairn's terms instead.
  if (typeof queue !== 'string' || !/^[\w.\-/]+$/.test(queue)) {
    throw new CairnError('INVALID_INPUT', `pg-boss queue names use letters, digits, "_", "-", "." and "/" only; got ${JSON.stringify(queue) ?? String(queue)}`);
  }
}

/**
 * Validates the options of one send (`checkSendOptions` of `@cairn/core`), and that the priority
 * fits pg-boss's int4 column.
 */
export function checkPgBossSendOptions(options: SendOptions): CheckedSendOptions {
  const checked = checkSendOptions(options);
  if (!Number.isInteger(checked.priority) || checked.priority < MIN_PRIORITY || checked.priority > MAX_PRIORITY) {
    throw new CairnError('INVALID_INPUT', `priority must be a 32-bit integer on pg-boss, got ${String(checked.priority)}`);
  }
  return checked;
}

/** A stable text form of a group cap, to tell two workers' caps apart. */
export function groupConcurrencyKey(value: GroupConcurrency | undefined): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number') return `n:${value}`;
  const tiers = Object.entries(value.tiers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([value.default, tiers]);
}
