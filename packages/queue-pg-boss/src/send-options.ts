import { CairnError, type GroupConcurrency, type JobGroup, type SendOptions } from '@cairn/core';

/** `SendOptions` after validation, with defaults filled in. */
export interface CheckedSendOptions {
  delayMs: number;
  priority: number;
  dedupeKey: string | undefined;
  group: JobGroup | undefined;
}

// pg-boss keeps priority in an int4 column; Cairn's contract is "higher runs sooner", which is also
// pg-boss's order, so any 32-bit integer passes through unchanged.
const MIN_PRIORITY = -2_147_483_648;
const MAX_PRIORITY = 2_147_483_647;

/** Throws `INVALID_INPUT` unless `queue` is a name pg-boss accepts. */
export function checkQueueName(queue: unknown): asserts queue is string {
  // pg-boss refuses any other character with a plain assertion error; say it in Cairn's terms instead.
  if (typeof queue !== 'string' || !/^[\w.\-/]+$/.test(queue)) {
    throw new CairnError(
      'INVALID_INPUT',
      `pg-boss queue names use letters, digits, "_", "-", "." and "/" only; got ${JSON.stringify(queue) ?? String(queue)}`,
    );
  }
}

/** Validates the options of one send; throws `INVALID_INPUT` / `INVALID_DURATION` naming the bad field. */
export function checkSendOptions(options: SendOptions): CheckedSendOptions {
  const delayMs = options.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new CairnError('INVALID_DURATION', `delayMs must be a finite number ≥ 0, got ${String(delayMs)}`);
  }
  const priority = options.priority ?? 0;
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
    throw new CairnError('INVALID_INPUT', `priority must be a 32-bit integer on pg-boss, got ${String(priority)}`);
  }
  const { dedupeKey } = options;
  if (dedupeKey !== undefined && (typeof dedupeKey !== 'string' || dedupeKey === '')) {
    throw new CairnError('INVALID_INPUT', 'dedupeKey must be a non-empty string');
  }
  return { delayMs, priority, dedupeKey, group: checkGroup(options.group) };
}

// Copied, so a caller mutating its options afterwards cannot move a job between groups.
function checkGroup(group: JobGroup | undefined): JobGroup | undefined {
  if (group === undefined) return undefined;
  if (typeof group !== 'object' || group === null || typeof group.id !== 'string' || group.id === '') {
    throw new CairnError('INVALID_INPUT', 'group.id must be a non-empty string');
  }
  if (group.tier !== undefined && typeof group.tier !== 'string') {
    throw new CairnError('INVALID_INPUT', 'group.tier must be a string');
  }
  return group.tier === undefined ? { id: group.id } : { id: group.id, tier: group.tier };
}

/** Throws `INVALID_INPUT` unless `value` is an integer ≥ 1. */
export function checkCap(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new CairnError('INVALID_INPUT', `${what} must be an integer ≥ 1, got ${String(value)}`);
  }
}

/** Validates `groupConcurrency` and returns it in pg-boss's shape (a copy). */
export function checkGroupConcurrency(value: GroupConcurrency | undefined): GroupConcurrency | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') {
    checkCap(value, 'groupConcurrency');
    return value;
  }
  if (typeof value !== 'object' || value === null) {
    throw new CairnError('INVALID_INPUT', 'groupConcurrency must be a number or { default, tiers }');
  }
  checkCap(value.default, 'groupConcurrency.default');
  const tiers: Record<string, number> = {};
  for (const [tier, cap] of Object.entries(value.tiers ?? {})) {
    checkCap(cap, `groupConcurrency.tiers.${tier}`);
    tiers[tier] = cap;
  }
  return { default: value.default, tiers };
}

/** A stable text form of a group cap, to tell two workers' caps apart. */
export function groupConcurrencyKey(value: GroupConcurrency | undefined): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number') return `n:${value}`;
  const tiers = Object.entries(value.tiers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([value.default, tiers]);
}
