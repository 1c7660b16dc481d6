import { CairnError } from '@cairn/core';
import { checkSendOptions, checkWorkOptions, type SendOptions, type WorkOptions } from '@cairn/core/backend';
import { toBullMQPriority } from './priority.js';

/** `SendOptions` after validation, in BullMQ's terms. */
export interface BullMQSendOptions {
  /** Whole milliseconds, rounded up so a job never runs before its delay. */
  delayMs: number;
  /** BullMQ priority (1 runs first). */
  bullPriority: number;
  dedupeKey: string | undefined;
}

/** Throws `INVALID_INPUT` unless `queue` is a usable BullMQ queue name. */
export function checkQueueName(queue: unknown): asserts queue is string {
  // ':' separates the parts of BullMQ's Redis keys; a name containing it could read another
  // queue's keys.
  if (typeof queue !== 'string' || queue === '' || queue.includes(':')) {
    throw new CairnError('INVALID_INPUT', `a BullMQ queue name must be a non-empty string without ":", got ${JSON.stringify(queue) ?? String(queue)}`);
  }
}

/**
 * Validates one send's options (`checkSendOptions` of `@cairn/core`) in BullMQ's terms; job groups
 * are refused (BullMQ has none without Pro).
 */
export function checkBullMQSendOptions(options: SendOptions): BullMQSendOptions {
  const { delayMs, priority, dedupeKey, group } = checkSendOptions(options);
  if (group !== undefined) {
    throw new CairnError('QUEUE_UNSUPPORTED', "BullMQ has no job groups (a BullMQ Pro feature); use queueStrategy: 'per-workflow'", {
      data: { queue: 'bullmq' },
    });
  }
  return { delayMs: Math.ceil(delayMs), bullPriority: toBullMQPriority(priority), dedupeKey };
}

/** Validates a worker's options (`checkWorkOptions` of `@cairn/core`) and returns its concurrency. */
export function checkBullMQWorkOptions(options: WorkOptions): number {
  const { concurrency, groupConcurrency } = checkWorkOptions(options);
  if (groupConcurrency !== undefined) {
    throw new CairnError(
      'QUEUE_UNSUPPORTED',
      "BullMQ has no job groups (a BullMQ Pro feature), so groupConcurrency cannot be honoured; use queueStrategy: 'per-workflow'",
      {
        data: { queue: 'bullmq' },
      },
    );
  }
  return concurrency;
}
