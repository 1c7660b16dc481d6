import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewStep } from '@cairn/core/backend';
import { toStepRecord } from '../src/codec/rows.js';
import { insertedStepRecord } from '../src/postgres/inserted-step-record.js';
import type { RoutineArgs } from '../src/codec/routine-args.js';
import { type STEP_INSERT_PARAMS, stepInsertValues, stepRoutineShape } from '../src/routines/params.js';
import { stepInsertArgs } from '../src/codec/step-args.js';
import { STEP_COLUMNS, type StepRow } from '../src/schema/tables.js';
import { stepIdentity } from '../src/codec/step-identity.js';

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
// A step of the given key and position; the rest of a succeeded task step unless `extra` says otherwise.
const step = (key: string, seq: number, extra: Partial<NewStep> = {}): NewStep => ({
  key,
  name: key,
  kind: 'task',
  seq,
  status: 'succeeded',
  maxAttempts: 1,
  ...extra,
});
const OUTPUT = { n: [1, 'two', null, { deep: true }] };
const STEPS: NewStep[] = [
  step('a', 0, { status: 'running', maxAttempts: 3, worker: 'w' }),
  step('b', 1, { output: OUTPUT, turn: 7, finishedAttempt: { status: 'succeeded', worker: 'w', startedAt: NOW - 5, output: OUTPUT } }),
  step('c', 2, {
    status: 'failed',
    maxAttempts: 2,
    error: { name: 'Error', message: 'boom', data: { why: 'x' } },
    turn: 8,
    finishedAttempt: { status: 'failed', worker: 'w', startedAt: NOW - 5, error: { name: 'Error', message: 'boom' } },
  }),
  step('d', 3, { kind: 'sleep', status: 'waiting', wakeAt: NOW + 60_000 }),
  step('e', 4, { kind: 'child', status: 'waiting', childRunId: 'child\u0000run' }),
  step('f', 5, { status: 'scheduled', maxAttempts: 4, queued: true, wakeAt: 0 }),
  step('\u0001"marker"', 6, { name: 'lone \ud800 surrogate', output: 0, turn: 0 }),
  step('g', 7, { output: null }),
  step('h', 8, { output: '' }),
  step('i', 9, { status: 'retry_wait', maxAttempts: 3, wakeAt: NOW + 1, error: { name: 'E', message: 'm' } }),
  // What the row makes of values a copy of the caller's would keep: a truthy non-boolean `queued`
  // (stored 0), NULL `turn` and `wakeAt`, `-0` and an `undefined` member in the JSON.
  step('j', 10, { queued: 1, turn: null, wakeAt: null, output: { z: -0, gone: undefined } } as never),
];

describe('insertedStepRecord', () => {
  for (const fence of [5, 0, null]) {
    it(`equals the record steps.load reads from the row the INSERT writes (fence ${fence}), key order included`, () => {
      for (const given of STEPS) {
        for (const runId of ['run-1', 'run\u0000nul']) {
          const { args, record } = storedRecord(runId, fence, given, NOW);
          const built = insertedStepRecord(runId, fence, given, NOW, args.p_output, args.p_error);
          assert.deepStrictEqual(built, record, `${given.key} of ${runId}`);
          assert.deepEqual(Object.keys(built), Object.keys(record), `${given.key}: key order`);
        }
      }
    });
  }

  it('shares no object with the step it was given', () => {
    const given = STEPS[1]!;
    const args = stepInsertArgs(stepIdentity('r', given.key), 1, given, NOW, false);
    const built = insertedStepRecord('r', 1, given, NOW, args.p_output, args.p_error);
    assert.notEqual(built.output, given.output);
    (built.output as { n: unknown[] }).n.push('mutated');
    assert.equal((given.output as { n: unknown[] }).n.length, 4);
  });
});
