import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StepRecord } from '../src/model/step.js';
import { stepsToForget } from '../src/engine/operations/retry-run.js';
import { stepsToCopy } from '../src/engine/operations/fork-run.js';

const step = (key: string, seq: number, status: StepRecord['status'], turn?: number): StepRecord => ({
  runId: 'r',
  key,
  name: key,
  kind: 'task',
  seq,
  status,
  attempt: 1,
  maxAttempts: 1,
  queued: false,
  createdAt: 0,
  updatedAt: 0,
  ...(turn === undefined ? {} : { turn }),
});

describe('what a retry forgets', () => {
  it('keeps succeeded steps and the failures handed over before the last success; forgets later failures and unfinished steps', () => {
    const steps = [step('caught', 0, 'failed', 1), step('used', 1, 'succeeded', 2), step('broke', 2, 'failed', 3), step('branch', 3, 'running')];
    assert.deepEqual(
      stepsToForget(steps).map((s) => s.key),
      ['broke', 'branch'],
    );
  });

  it('forgets every failure when nothing succeeded after it (the code may take another path, nothing kept depends on it)', () => {
    assert.deepEqual(
      stepsToForget([step('a', 0, 'failed', 1), step('b', 1, 'failed', 2)]).map((s) => s.key),
      ['a', 'b'],
    );
  });

  it('a failure handed over after a concurrent success is forgotten, one before it is kept', () => {
    const steps = [step('x', 0, 'failed', 2), step('y', 1, 'succeeded', 1), step('z', 2, 'failed', 3)];
    assert.deepEqual(
      stepsToForget(steps).map((s) => s.key),
      ['x', 'z'],
    );
  });
});

describe('what a fork copies', () => {
  it('sequential code: every step before fromStep', () => {
    const steps = [step('a', 0, 'succeeded', 1), step('b', 1, 'succeeded', 2), step('c', 2, 'succeeded', 3)];
    assert.deepEqual(
      stepsToCopy(steps, steps[1]!).map((s) => s.key),
      ['a'],
    );
    assert.deepEqual(stepsToCopy(steps, steps[0]!), []);
  });

  it('concurrent branches: a step recorded before fromStep but handed over after a later one runs again', () => {
    // x (seq 0) was handed over in turn 3, after y (seq 1, turn 1) and w (seq 3, turn 2).
    const steps = [step('x', 0, 'succeeded', 3), step('y', 1, 'succeeded', 1), step('z', 2, 'succeeded', 4), step('w', 3, 'succeeded', 2)];
    assert.deepEqual(
      stepsToCopy(steps, steps[2]!).map((s) => s.key),
      ['y'],
      'only what came before the first turn of a step at or after z: w (turn 2)',
    );
  });

  it('never copies an unfinished step or a compensation', () => {
    const steps = [step('a', 0, 'succeeded', 1), { ...step('a:compensate', 0, 'succeeded') }, step('b', 1, 'running'), step('c', 2, 'succeeded', 2)];
    assert.deepEqual(
      stepsToCopy(steps, steps[3]!).map((s) => s.key),
      ['a'],
    );
  });
});
