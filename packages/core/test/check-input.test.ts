import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createMemoryStore } from '@cairn/core';
import { withArgumentChecks, IDENTIFIER_LIMITS, checkIdentifier } from '@cairn/core/backend';

function refusal(fn: () => unknown): CairnError {
  try {
    fn();
  } catch (error) {
    assert.ok(CairnError.is(error, 'INVALID_INPUT'), `expected INVALID_INPUT, got ${String(error)}`);
    return error;
  }
  assert.fail('expected INVALID_INPUT, nothing was thrown');
}

describe('checkIdentifier', () => {
  it('returns a well-formed identifier unchanged, surrogate pairs and any other character included', () => {
    for (const ok of ['a', 'with.dots', '$where', 'ünï 工作流 🚀 𝄞', 'tab\tnew\nline', '\u0001', 'x'.repeat(200)]) {
      assert.equal(checkIdentifier('step name', ok, 200), ok);
    }
  });

  it('refuses non-strings, empty, too long, lone surrogates and NUL, naming the argument and quoting the value', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ $gt: '' }, /^step name must be a string, got \{"\$gt":""\}$/],
      [42, /must be a string, got 42$/],
      [undefined, /must be a string, got undefined$/],
      [new String('x'), /must be a string, got a String object "x"$/],
      ['', /^step name must not be empty, got ""$/],
      ['x'.repeat(11), /^step name must be at most 10 characters \(it has 11\)/],
      ['x\uD800', /^step name must be well-formed UTF-16 \(it contains a lone surrogate\), got "x\\ud800"$/],
      ['\uDC00', /lone surrogate/],
      ['a\u0000b', /^step name must not contain the NUL character \(U\+0000\), got "a\\u0000b"$/],
    ];
    for (const [value, message] of cases) {
      const error = refusal(() => checkIdentifier('step name', value, 10));
      assert.match(error.message, message);
      assert.equal((error.data as { argument: string }).argument, 'step name');
      // The message is well-formed itself, so it survives every store and log.
      assert.ok((error.message as unknown as { isWellFormed(): boolean }).isWellFormed());
    }
  });

  it('accepts the empty string only with allowEmpty (state keys)', () => {
    assert.equal(checkIdentifier('state key', '', IDENTIFIER_LIMITS.stateKey, { allowEmpty: true }), '');
    refusal(() => checkIdentifier('state key', 'a\u0000', IDENTIFIER_LIMITS.stateKey, { allowEmpty: true }));
  });

  it('quotes at most 80 characters of a long value', () => {
    const error = refusal(() => checkIdentifier('key', 'k'.repeat(5000), 10));
    assert.ok(error.message.length < 200, error.message);
  });
});

describe('withArgumentChecks', () => {
  it('keeps the store’s other members and getters, and spreads like the original', async () => {
    let reads = 0;
    const inner = createMemoryStore();
    const withGetter = {
      ...inner,
      capabilities: {
        get multiProcess() {
          reads += 1;
          return false;
        },
        maxPayloadBytes: 5,
      },
      extra: () => 'extra',
    };
    const checked = withArgumentChecks(withGetter);
    assert.equal(checked.name, 'memory');
    assert.equal(checked.extra(), 'extra');
    assert.equal(checked.capabilities.multiProcess, false);
    assert.equal(reads, 1, 'the getter is still evaluated on each read');
    assert.equal({ ...checked }.name, 'memory');
    await checked.close();
  });

  it('rejects (never throws synchronously) and never calls the backend', async () => {
    const calls: string[] = [];
    const inner = createMemoryStore();
    const spy = { ...inner, runs: { ...inner.runs, get: async (id: string) => (calls.push(id), undefined) } };
    const checked = withArgumentChecks(spy);
    const pending = checked.runs.get({ $gt: '' } as unknown as string);
    assert.ok(pending instanceof Promise);
    await assert.rejects(pending, (err) => CairnError.is(err, 'INVALID_INPUT') && /runs\.get: runId must be a string/.test((err as Error).message));
    assert.deepEqual(calls, []);
    assert.equal(await checked.runs.get('a-real-string'), undefined);
    assert.deepEqual(calls, ['a-real-string']);
  });
});
