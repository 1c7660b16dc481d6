import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, type Duration } from '@cairn/core';
import { MAX_DURATION_MS, toMilliseconds } from '@cairn/core/backend';

const DAY = 86_400_000;
const YEAR = 365.25 * DAY;

function refused(value: unknown, what = 'duration'): CairnError {
  let error: unknown;
  try {
    toMilliseconds(value as Duration, what);
  } catch (e) {
    error = e;
  }
  assert.ok(CairnError.is(error, 'INVALID_INPUT'), `${String(value)}: expected INVALID_INPUT, got ${String(error)}`);
  return error as CairnError;
}

describe('Duration: the type', () => {
  it('accepts numbers and strings of a number and a unit, and refuses anything else at compile time', () => {
    const ok: Duration[] = [0, 250, '250ms', '5s', '10m', '2h', '1d', '1.5h', '36525d'];
    assert.equal(ok.length, 9);
    // Each line below must fail to type-check: `pnpm --filter @cairn/core typecheck` reports an
    // unused directive if one of them compiles.
    // @ts-expect-error a unit spelt out is not a Duration
    const minutes: Duration = '10 minutes';
    // @ts-expect-error a bare numeric string has no unit
    const bare: Duration = '10';
    // @ts-expect-error the empty string is not a Duration
    const empty: Duration = '';
    // @ts-expect-error an unknown unit
    const weeks: Duration = '2w';
    // @ts-expect-error any string will not do
    const anyString: Duration = String('5s');
    // The refused values still fail at run time when a cast smuggles them through.
    for (const value of [minutes, bare, empty, weeks]) refused(value);
    assert.equal(toMilliseconds(anyString), 5_000);
  });
});

describe('toMilliseconds', () => {
  it('converts each unit to whole milliseconds, rounding a fraction up so a wait is never shorter', () => {
    assert.deepEqual(
      [
        toMilliseconds(0),
        toMilliseconds(250),
        toMilliseconds('250ms'),
        toMilliseconds('5s'),
        toMilliseconds('10m'),
        toMilliseconds('2h'),
        toMilliseconds('1d'),
      ],
      [0, 250, 250, 5_000, 600_000, 7_200_000, DAY],
    );
    assert.equal(toMilliseconds(1.2), 2);
    assert.equal(toMilliseconds('0.5ms'), 1);
    assert.equal(toMilliseconds('1.5h'), 5_400_000);
    // Other spellings of a non-negative decimal that TypeScript's `${number}` accepts.
    assert.deepEqual([toMilliseconds('.5s'), toMilliseconds('5.s'), toMilliseconds('1e3ms'), toMilliseconds('2E1s')], [500, 5_000, 1_000, 20_000]);
  });

  it('accepts every duration up to the bound of 100 years, and nothing longer', () => {
    assert.equal(MAX_DURATION_MS, 100 * YEAR);
    assert.equal(toMilliseconds('25d'), 25 * DAY);
    assert.equal(toMilliseconds('30d'), 30 * DAY);
    assert.equal(toMilliseconds('36525d'), MAX_DURATION_MS);
    assert.equal(toMilliseconds(MAX_DURATION_MS), MAX_DURATION_MS);
    const error = refused(MAX_DURATION_MS + 1, 'sleep "x"');
    assert.match(error.message, /sleep "x"/);
    refused('36526d');
    refused(1e20);
    refused('1e20ms');
  });

  it('refuses negative, NaN, infinite, malformed and non-duration values with INVALID_INPUT naming the value', () => {
    for (const value of [
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '',
      ' ',
      '-5s',
      'soon',
      '10 minutes',
      '5',
      'ms',
      '1 d',
      ' 5s',
      '0x10s',
      null,
      undefined,
      {},
      [],
      true,
    ]) {
      const error = refused(value, 'timeout of step "fetch"');
      assert.match(error.message, /timeout of step "fetch"/);
      assert.deepEqual((error.data as { what: string }).what, 'timeout of step "fetch"');
    }
    assert.match(refused(1e20).message, /100000000000000000000/);
    assert.match(refused('10 minutes').message, /"10 minutes"/);
    assert.equal((refused(Number.NaN).data as { value: unknown }).value, 'NaN');
  });
});
