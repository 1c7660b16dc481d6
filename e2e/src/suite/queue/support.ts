import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import type { Job, Queue, QueueWorker, WorkOptions } from '@cairn/core/backend';
import type { QueueCaseEnv } from './queue-case.js';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 10 ms; fails with `what` (and `detail()` when given) after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string, detail?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `: ${detail()}` : ''}`);
    await sleep(10);
  }
}

/** One delivery seen by a test handler. */
export interface Delivery {
  job: Job;
  /** `Date.now()` when the handler was called. */
  at: number;
  /** Which of the case's workers ran it. */
  worker: string;
}

/** Records deliveries; payloads are expected to be objects with a string or number `id`. */
export class Deliveries {
  readonly all: Delivery[] = [];

  record(job: Job, worker: string): Delivery {
    const delivery = { job, at: Date.now(), worker };
    this.all.push(delivery);
    return delivery;
  }

  /** Deliveries whose payload `id` is `id`. */
  of(id: Json): Delivery[] {
    return this.all.filter((d) => (d.job.payload as { id?: Json } | null)?.id === id);
  }

  /** How many times each payload `id` was delivered. */
  counts(): Map<Json, number> {
    const counts = new Map<Json, number>();
    for (const d of this.all) {
      const id = (d.job.payload as { id?: Json } | null)?.id ?? null;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  ids(): string {
    return JSON.stringify(this.all.map((d) => (d.job.payload as { id?: Json } | null)?.id ?? d.job.payload));
  }
}

/** Starts a worker that is stopped when the case ends. */
export async function startWorker(
  env: QueueCaseEnv,
  queue: Queue,
  name: string,
  handler: (job: Job) => Promise<void>,
  options?: WorkOptions,
): Promise<QueueWorker> {
  const worker = await queue.work(name, handler, options);
  env.defer(() => worker.stop());
  return worker;
}

/** The queue name every case uses inside its own namespace. */
export const QUEUE = 'cf-jobs';
