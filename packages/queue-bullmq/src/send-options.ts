import { CairnError, type SendOptions, type WorkOptions } from '@cairn/core';
import { toBullMQPriority } from './priority.js';

/** `SendOptions` after validation, in BullMQ's terms. */
export interface CheckedSendOptions {
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

/** Validates one send's options; job groups are refused (BullMQ has none without Pro). */
export function checkSendOptions(options: SendOptions): CheckedSendOptions {
  const delayMs = options.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new CairnError('INVALID_DURATION', `delayMs must be a finite number ≥ 0, got ${String(delayMs)}`);
  }
  const priority = options.priority ?? 0;
  if (typeof priority !== 'number') throw new CairnError('INVALID_INPUT', `priority must be a number, got ${String(priority)}`);
  const { dedupeKey } = options;
  if (dedupeKey !== undefined && (typeof dedupeKey !== 'string' || dedupeKey === '')) {
    throw new CairnError('INVALID_INPUT', 'dedupeKey must be a non-empty string');
  }
  if (options.group !== undefined) {
    throw new CairnError('QUEUE_UNSUPPORTED', "BullMQ has no job groups (a BullMQ Pro feature); use queueStrategy: 'per-workflow'", {
      data: { queue: 'bullmq' },
    });
  }
  return { delayMs: Math.ceil(delayMs), bullPriority: toBullMQPriority(priority), dedupeKey };
}

/** Validates a worker's options and returns its concurrency. */
export function checkWorkOptions(options: WorkOptions): number {
  const concurrency = options.concurrency ?? 1;
  if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new CairnError('INVALID_INPUT', `concurrency must be an integer ≥ 1, got ${String(concurrency)}`);
  }
  if (options.groupConcurrency !== undefined) {
    throw new CairnError('QUEUE_UNSUPPORTED', "BullMQ has no job groups (a BullMQ Pro feature), so groupConcurrency cannot be honoured; use queueStrategy: 'per-workflow'", {
      data: { queue: 'bullmq' },
    });
  }
  return concurrency;
}
