// `@cairn/core/backend`: the helpers stores and queues share, each with the outcome every backend
// used to write out itself (same codes, messages and data).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import {
  assertQueueOpen,
  callDriver,
  checkSendOptions,
  checkWritableRun,
  decodeRunCursor,
  driverError,
  encodeRunCursor,
  leaseLost,
  newStepRecord,
  reportSafely,
  runConflict,
  runNotFound,
  toErrorRecord,
  withArgumentChecks,
} from '@cairn/core/backend';

const rejected = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof CairnError, String(error));
    return { code: error.code, message: error.message, data: error.data };
  }
  assert.fail('did not throw');
};

describe('@cairn/core/backend', () => {
  it('the rejected-write check: missing run, stale fence, terminal run, in that order; a writable run passes', () => {
    assert.deepEqual(
      rejected(() => checkWritableRun('r1', 3, undefined)),
      { code: 'RUN_NOT_FOUND', message: 'Run r1 not found', data: { runId: 'r1' } },
    );
    assert.deepEqual(
      rejected(() => checkWritableRun('r1', 3, { fence: 4, status: 'completed' })),
      {
        code: 'LEASE_LOST',
        message: 'Run r1: fence 3 is stale (current 4)',
        data: { runId: 'r1', fence: 3, current: 4 },
      },
    );
    assert.deepEqual(
      rejected(() => checkWritableRun('r1', null, { fence: 4, status: 'failed' })),
      {
        code: 'RUN_CONFLICT',
        message: 'Run r1 is failed',
        data: { runId: 'r1', status: 'failed' },
      },
    );
    const run = { fence: 4, status: 'running' };
    assert.equal(checkWritableRun('r1', 4, run), run);
    assert.equal(runNotFound('x').code, 'RUN_NOT_FOUND');
    assert.equal(leaseLost('x', null, null).message, 'Run x: fence null is stale (current null)');
    assert.equal(runConflict('x', 'pending', ['running']).message, 'Run x is pending, expected running');
  });

  it('driver errors become the given code with "<what> failed: <message>" and the cause; Cairn errors pass through', async () => {
    const cause = new Error('connection reset');
    const wrapped = driverError('STORE_ERROR', 'MongoDB runs.get', cause, { operation: 'runs.get' });
    assert.equal(wrapped.code, 'STORE_ERROR');
    assert.equal(wrapped.message, 'MongoDB runs.get failed: connection reset');
    assert.equal(wrapped.cause, cause);
    assert.deepEqual(wrapped.data, { operation: 'runs.get' });
    assert.equal(driverError('QUEUE_ERROR', 'BullMQ send', 'plain').message, 'BullMQ send failed: plain');
    await assert.rejects(
      callDriver('QUEUE_ERROR', 'pg-boss send to q', async () => Promise.reject(cause)),
      (error: unknown) => {
        return CairnError.is(error, 'QUEUE_ERROR') && error.message === 'pg-boss send to q failed: connection reset' && error.cause === cause;
      },
    );
    const own = new CairnError('LEASE_LOST', 'kept');
    await assert.rejects(
      callDriver('STORE_ERROR', 'x', async () => Promise.reject(own)),
      (error: unknown) => error === own,
    );
    assert.equal(await callDriver('STORE_ERROR', 'x', async () => 7), 7);
  });

  it('queue adapters: a closed queue refuses with ENGINE_STOPPED; a throwing error hook is contained', () => {
    assert.deepEqual(
      rejected(() => assertQueueOpen(Promise.resolve(), 'BullMQ', 'main', 'send')),
      {
        code: 'ENGINE_STOPPED',
        message: 'BullMQ queue "main" is closed; send() is no longer accepted',
        data: undefined,
      },
    );
    assertQueueOpen(undefined, 'BullMQ', 'main', 'send');
    const seen: unknown[] = [];
    reportSafely((error, job) => seen.push(error, job), 'boom', undefined);
    reportSafely((_error: unknown) => {
      throw new Error('hook failed');
    }, 'boom');
    assert.deepEqual(seen, ['boom', undefined]);
  });

  it('also holds the codecs and checks backends import (cursor, new step record, error record, queue and store checks)', () => {
    assert.deepEqual(decodeRunCursor(encodeRunCursor({ createdAt: 5, id: 'a' })), { createdAt: 5, id: 'a' });
    assert.equal(newStepRecord('r', { key: 'k', name: 'k', kind: 'task', seq: 0, status: 'running', maxAttempts: 1 }, 9).attempt, 1);
    assert.equal(toErrorRecord(new Error('e')).message, 'e');
    assert.equal(checkSendOptions({}).delayMs, 0);
    assert.equal(typeof withArgumentChecks, 'function');
  });
});
