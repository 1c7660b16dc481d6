import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CairnError, createEngine, createMemoryStore, NonRetryableError, RetryAfterError, isNonRetryable } from '../src/index.js';
import { decideRetry, resolveRetryPolicy, resolveStepRetry } from '../src/engine/define/retry-policy.js';

describe('retry decision', () => {
  const policy = resolveRetryPolicy(3, { type: 'fixed', delay: 100 });

  it('retries with the backoff while attempts are left, never after the last', () => {
    assert.deepEqual(decideRetry(policy, new Error('x'), 1, 4), { retry: true, delayMs: 100 });
    assert.deepEqual(decideRetry(policy, new Error('x'), 4, 4), { retry: false });
  });

  it('never retries a non-retryable error, by class or by the property', () => {
    class Declined extends NonRetryableError {
      override name = 'Declined';
    }
    assert.deepEqual(decideRetry(policy, new Declined('no'), 1, 4), { retry: false });
    assert.deepEqual(decideRetry(policy, Object.assign(new Error('own class'), { nonRetryable: true }), 1, 4), { retry: false });
    assert.equal(isNonRetryable(new Declined('no')), true);
    assert.equal(new Declined('no').name, 'Declined');
    assert.equal(isNonRetryable(new Error('x')), false);
    assert.equal(isNonRetryable('a string'), false);
  });

  it('asks retryIf, with non-Error values wrapped; a throwing predicate means no retry', () => {
    const seen: unknown[] = [];
    const p = resolveRetryPolicy(3, undefined, (error) => {
      seen.push(error);
      return error.message === 'again';
    });
    assert.equal(decideRetry(p, new Error('again'), 1, 4).retry, true);
    assert.equal(decideRetry(p, 'again', 1, 4).retry, true);
    assert.ok(seen[1] instanceof Error);
    assert.equal(decideRetry(p, new Error('stop'), 1, 4).retry, false);
    const throwing = resolveRetryPolicy(3, undefined, () => {
      throw new Error('bug');
    });
    assert.deepEqual(decideRetry(throwing, new Error('x'), 1, 4), { retry: false });
  });

  it('waits what retryAfter asks instead of the backoff; an invalid one fails with INVALID_INPUT caused by the error', () => {
    assert.deepEqual(decideRetry(policy, new RetryAfterError('slow down', '5m'), 1, 4), { retry: true, delayMs: 300_000 });
    assert.deepEqual(decideRetry(policy, Object.assign(new Error('429'), { retryAfter: 1500 }), 1, 4), { retry: true, delayMs: 1500 });
    assert.deepEqual(decideRetry(policy, new RetryAfterError('no attempts left', '5m'), 4, 4), { retry: false });
    for (const bad of [-1, Number.NaN, '10 minutes', '200y', 1e20]) {
      const thrown = new RetryAfterError('bad', bad as never);
      const decision = decideRetry(policy, thrown, 1, 4);
      assert.equal(decision.retry, false);
      assert.ok(!decision.retry && CairnError.is(decision.error, 'INVALID_INPUT'), `retryAfter ${String(bad)}`);
      assert.equal(!decision.retry && decision.error?.cause, thrown);
    }
  });

  it('a step option left out comes from the engine default; bad values are INVALID_INPUT', () => {
    const defaults = { retries: 2, backoff: { type: 'fixed' as const, delay: 7 }, retryIf: () => false };
    const merged = resolveStepRetry({}, defaults);
    assert.equal(merged.maxAttempts, 3);
    assert.equal(merged.delayAfter(1), 7);
    assert.equal(merged.retryIf, defaults.retryIf);
    assert.equal(resolveStepRetry({ retries: 0 }, defaults).maxAttempts, 1);
    assert.equal(resolveStepRetry({}, undefined).maxAttempts, 1);
    assert.throws(
      () => resolveRetryPolicy(1, undefined, 'yes' as never),
      (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
    );
  });

  it('createEngine refuses a bad defaultRetry with INVALID_INPUT', () => {
    const store = createMemoryStore();
    for (const defaultRetry of [null, 5, { retries: -1 }, { backoff: { type: 'fixed', delay: '10 minutes' } }, { retryIf: true }]) {
      assert.throws(
        () => createEngine({ store, workflows: [], defaultRetry: defaultRetry as never }),
        (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
        JSON.stringify(defaultRetry),
      );
    }
  });
});
