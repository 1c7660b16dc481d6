import { CairnError } from '@cairn/core';

/**
 * BullMQ orders prioritized jobs by a number from 1 (first) to 2 097 151 (last), and runs jobs
 * without a priority (0) before every prioritized one. Cairn's priority is "higher runs sooner"
 * with 0 as the default, so every job is sent prioritized, with Cairn's 0 in the middle of
 * BullMQ's range: `bullmq = 1 048 576 − cairn`. Cairn priorities 1 048 575 … −1 048 575 map to
 * BullMQ 1 … 2 097 151; anything outside is refused rather than clamped, since clamping would
 * silently merge distinct priorities.
 */
export const BULLMQ_PRIORITY_MIDPOINT = 1_048_576;

/** The highest Cairn priority BullMQ can represent. */
export const MAX_CAIRN_PRIORITY = BULLMQ_PRIORITY_MIDPOINT - 1;
/** The lowest Cairn priority BullMQ can represent. */
export const MIN_CAIRN_PRIORITY = -(BULLMQ_PRIORITY_MIDPOINT - 1);

/** Maps a Cairn priority to BullMQ's; throws `INVALID_INPUT` outside the representable range. */
export function toBullMQPriority(priority: number): number {
  if (!Number.isInteger(priority) || priority < MIN_CAIRN_PRIORITY || priority > MAX_CAIRN_PRIORITY) {
    throw new CairnError('INVALID_INPUT', `priority must be an integer from ${MIN_CAIRN_PRIORITY} to ${MAX_CAIRN_PRIORITY} on BullMQ, got ${String(priority)}`);
  }
  return BULLMQ_PRIORITY_MIDPOINT - priority;
}

/** The Cairn priority of a BullMQ priority written by `toBullMQPriority`. */
export function fromBullMQPriority(priority: number): number {
  return BULLMQ_PRIORITY_MIDPOINT - priority;
}
