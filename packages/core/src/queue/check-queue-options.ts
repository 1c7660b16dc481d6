import { checkMilliseconds } from '../engine/define/duration.js';
import { CairnError } from '../errors/cairn-error.js';
import type { GroupConcurrency, JobGroup, SendOptions, WorkOptions } from './queue.js';

/** `SendOptions` after validation: defaults filled in, the group copied. */
export interface CheckedSendOptions {
  /** Whole milliseconds (rounded up), from 0 up to `MAX_DURATION_MS` (default 0). */
  delayMs: number;
  /** A finite number (default 0); an adapter may narrow the range its broker stores. */
  priority: number;
  dedupeKey: string | undefined;
  /** A copy, so a caller mutating its options afterwards cannot move a queued job between groups. */
  group: JobGroup | undefined;
}

/** `WorkOptions` after validation: defaults filled in, the caps copied. */
export interface CheckedWorkOptions {
  /** An integer ≥ 1 (default 1). */
  concurrency: number;
  /** Every cap an integer ≥ 1; a copy, like `CheckedSendOptions.group`. */
  groupConcurrency: GroupConcurrency | undefined;
}

/**
 * Validates the options of one `Queue.send` the way every Cairn queue does, before anything is
 * sent: `INVALID_INPUT` naming the field for any bad value, including a delay that is negative,
 * not finite or longer than `MAX_DURATION_MS` (100 years). For queue adapter authors; an adapter
 * adds its broker's own limits.
 */
export function checkSendOptions(options: SendOptions): CheckedSendOptions {
  const delayMs = checkMilliseconds(options.delayMs ?? 0, 'delayMs');
  const priority = options.priority ?? 0;
  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    throw new CairnError('INVALID_INPUT', `priority must be a finite number, got ${String(priority)}`);
  }
  const { dedupeKey } = options;
  if (dedupeKey !== undefined && (typeof dedupeKey !== 'string' || dedupeKey === '')) {
    throw new CairnError('INVALID_INPUT', 'dedupeKey must be a non-empty string');
  }
  return { delayMs, priority, dedupeKey, group: copyGroup(options.group) };
}

/**
 * Validates the options of one `Queue.work` the way every Cairn queue does: `INVALID_INPUT`
 * naming the field unless `concurrency` and every group cap are integers ≥ 1. For queue adapter
 * authors; an adapter without job groups refuses `groupConcurrency` itself.
 */
export function checkWorkOptions(options: WorkOptions): CheckedWorkOptions {
  const concurrency = options.concurrency ?? 1;
  checkCap(concurrency, 'concurrency');
  return { concurrency, groupConcurrency: copyGroupConcurrency(options.groupConcurrency) };
}

function copyGroup(group: JobGroup | undefined): JobGroup | undefined {
  if (group === undefined) return undefined;
  if (typeof group !== 'object' || group === null || typeof group.id !== 'string' || group.id === '') {
    throw new CairnError('INVALID_INPUT', 'group.id must be a non-empty string');
  }
  if (group.tier !== undefined && typeof group.tier !== 'string') {
    throw new CairnError('INVALID_INPUT', 'group.tier must be a string');
  }
  return group.tier === undefined ? { id: group.id } : { id: group.id, tier: group.tier };
}

function copyGroupConcurrency(value: GroupConcurrency | undefined): GroupConcurrency | undefined {
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

function checkCap(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new CairnError('INVALID_INPUT', `${what} must be an integer ≥ 1, got ${String(value)}`);
  }
}
