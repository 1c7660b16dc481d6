import type { Queue } from '@cairn/core/backend';
import { CHILD_URL_ENV, openQueue } from './bullmq-harness.js';

/** Opens the parent's queue of `namespace` in the worker-death case's child process. */
export async function createQueue(namespace: string): Promise<Queue> {
  const url = process.env[CHILD_URL_ENV];
  if (!url) throw new Error(`${CHILD_URL_ENV} is not set`);
  return openQueue(url, namespace);
}
