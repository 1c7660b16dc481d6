import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewStep } from '@cairn/core';
import { toStepRecord } from '../src/codec/rows.js';
import { insertedStepRecord } from '../src/postgres/inserted-step-record.js';
import { type STEP_INSERT_PARAMS, stepInsertValues, stepRoutineShape, type RoutineArgs } from '../src/routines/params.js';
import { stepInsertArgs } from '../src/routines/routine-args.js';
import { STEP_COLUMNS, type StepRow } from '../src/schema/tables.js';
import { stepIdentity } from '../src/steps-shared.js';

// The reference: the row as `step_insert_v2`'s INSERT writes it (each step column from the argument
// the generated DDL takes it from), read back by `toStepRecord` as `steps.load` reads it.
const INSERTED = stepInsertValues(stepRoutineShape('0008'));
function storedRecord(runId: string, fence: number | null, step: NewStep, now: number) {
  const args = stepInsertArgs(stepIdentity(runId, step.key), fence, step, now, false);
  const row: Record<string, unknown> = {};
  STEP_COLUMNS.forEach((column, i) => {
    const value = INSERTED[i]!;
    row[column] = value === '1' ? 1 : args[value as keyof RoutineArgs<typeof STEP_INSERT_PARAMS>];
  });
  return { args, record: toStepRecord(row as unknown as StepRow) };
}

const NOW = 1_700_000_000_123;
const STEPS: NewStep[] = [
  { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 3, worker: 'w' },
  {
    key: 'b',
    name: 'b',
    kind: 'task',
    seq: 1,
    status: 'succeeded',
    maxAttempts: 1,
    output: { n: [1, 'two', null, { deep: true }] },
    turn: 7,
    finishedAttempt: { status: 'succeeded', worker: 'w', startedAt: NOW - 5, output: { n: [1, 'two', null, { deep: true }] } },
  },
  {
    key: 'c',
    name: 'c',
    kind: 'task',
    seq: 2,
    status: 'failed',
    maxAttempts: 2,
    error: { name: 'Error', message: 'boom', data: { why: 'x' } },
    turn: 8,
    finishedAttempt: { status: 'failed', worker: 'w', startedAt: NOW - 5, error: { name: 'Error', message: 'boom' } },
  },
  { key: 'd', name: 'd', kind: 'sleep', seq: 3, status: 'waiting', maxAttempts: 1, wakeAt: NOW + 60_000 },
  { key: 'e', name: 'e', kind: 'child', seq: 4, status: 'waiting', maxAttempts: 1, childRunId: 'child\u0000run' },
  { key: 'f', name: 'f', kind: 'task', seq: 5, status: 'scheduled', maxAttempts: 4, queued: true, wakeAt: 0 },
  { key: '\u0001"marker"', name: 'lone \ud800 surrogate', kind: 'task', seq: 6, status: 'succeeded', maxAttempts: 1, output: 0, turn: 0 },
  { key: 'g', name: 'g', kind: 'task', seq: 7, status: 'succeeded', maxAttempts: 1, output: null },
  { key: 'h', name: 'h', kind: 'task', seq: 8, status: 'succeeded', maxAttempts: 1, output: '' },
  { key: 'i', name: 'i', kind: 'task', seq: 9, status: 'retry_wait', maxAttempts: 3, wakeAt: NOW + 1, error: { name: 'E', message: 'm' } },
  // What the row makes of values a copy of the caller's would keep: a truthy non-boolean `queued`
  // (stored 0), NULL `turn` and `wakeAt`, `-0` and an `undefined` member in the JSON.
  { key: 'j', name: 'j', kind: 'task', seq: 10, status: 'succeeded', maxAttempts: 1, queued: 1, turn: null, wakeAt: null, output: { z: -0, gone: undefined } } as never,
];

describe('insertedStepRecord', () => {
  for (const fence of [5, 0, null]) {
    it(`equals the record steps.load reads from the row the INSERT writes (fence ${fence}), key order included`, () => {
      for (const step of STEPS) {
        for (const runId of ['run-1', 'run\u0000nul']) {
          const { args, record } = storedRecord(runId, fence, step, NOW);
          const built = insertedStepRecord(runId, fence, step, NOW, args.p_output, args.p_error);
          assert.deepStrictEqual(built, record, `${step.key} of ${runId}`);
          assert.deepEqual(Object.keys(built), Object.keys(record), `${step.key}: key order`);
        }
      }
    });
  }

  it('shares no object with the step it was given', () => {
    const step = STEPS[1]!;
    const args = stepInsertArgs(stepIdentity('r', step.key), 1, step, NOW, false);
    const built = insertedStepRecord('r', 1, step, NOW, args.p_output, args.p_error);
    assert.notEqual(built.output, step.output);
    (built.output as { n: unknown[] }).n.push('mutated');
    assert.equal((step.output as { n: unknown[] }).n.length, 4);
  });
});
