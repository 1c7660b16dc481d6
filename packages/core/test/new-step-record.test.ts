import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newStepRecord, type NewStep } from '@cairn/core/backend';

describe('newStepRecord', () => {
  it('starts at attempt 1, not queued, created and updated at now, without absent optional fields', () => {
    const step: NewStep = { key: 'charge', name: 'charge', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w1' };
    const record = newStepRecord('run-1', step, 1_000);
    assert.deepEqual(record, {
      runId: 'run-1',
      key: 'charge',
      name: 'charge',
      kind: 'task',
      seq: 0,
      status: 'running',
      attempt: 1,
      maxAttempts: 3,
      queued: false,
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    for (const field of ['output', 'error', 'wakeAt', 'childRunId', 'worker']) assert.equal(field in record, false, field);
  });

  it('keeps the optional fields it is given, with output and error deep-copied', () => {
    const output = { items: [1, { nested: true }] };
    const error = { name: 'Error', message: 'boom', data: { tries: [1, 2] } };
    const step: NewStep = {
      key: 'wait#2',
      name: 'wait',
      kind: 'child',
      seq: 4,
      status: 'waiting',
      maxAttempts: 1,
      queued: true,
      output,
      error,
      wakeAt: 5_000,
      childRunId: 'child-1',
    };
    const record = newStepRecord('run-1', step, 2_000);
    assert.equal(record.queued, true);
    assert.equal(record.wakeAt, 5_000);
    assert.equal(record.childRunId, 'child-1');
    assert.deepEqual(record.output, output);
    assert.deepEqual(record.error, error);
    output.items.push(3);
    error.data.tries.push(3);
    assert.deepEqual(record.output, { items: [1, { nested: true }] });
    assert.deepEqual(record.error, { name: 'Error', message: 'boom', data: { tries: [1, 2] } });
  });

  it('keeps falsy outputs: null, 0, false and the empty string are present, not absent', () => {
    for (const output of [null, 0, false, '']) {
      const record = newStepRecord('run-1', { key: 'k', name: 'k', kind: 'now', seq: 0, status: 'succeeded', maxAttempts: 1, output }, 0);
      assert.equal('output' in record, true);
      assert.equal(record.output, output);
    }
  });
});
