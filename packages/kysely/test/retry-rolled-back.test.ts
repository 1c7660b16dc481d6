import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryRolledBack } from '../src/dialect/retry-rolled-back.js';

const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213 });
const isDeadlock = (error: unknown) => (error as { errno?: unknown }).errno === 1213;

describe('retryRolledBack', () => {
  it('runs a rolled-back unit again until it succeeds', async () => {
    let calls = 0;
    const result = await retryRolledBack(isDeadlock, async () => {
      calls += 1;
      if (calls < 3) throw deadlock;
      return 'done';
    });
    assert.equal(result, 'done');
    assert.equal(calls, 3);
  });

  it('gives up after four tries with the last error', async () => {
    let calls = 0;
    await assert.rejects(
      retryRolledBack(isDeadlock, async () => {
        calls += 1;
        throw deadlock;
      }),
      (error: unknown) => error === deadlock,
    );
    assert.equal(calls, 4);
  });

  it('never reruns a unit that failed for any other reason', async () => {
    let calls = 0;
    const other = Object.assign(new Error('Duplicate entry'), { errno: 1062 });
    await assert.rejects(
      retryRolledBack(isDeadlock, async () => {
        calls += 1;
        throw other;
      }),
      (error: unknown) => error === other,
    );
    assert.equal(calls, 1);
  });
});
