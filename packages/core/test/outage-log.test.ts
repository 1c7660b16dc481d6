/**
 * Logging an outage once per cause (createOutageLog, errorCause) and the engine's startTimeoutMs
 * option. The outage behaviour itself (start() waiting for a stopped server, two worker processes
 * through a restart) is tested against real servers in e2e/test/outage-restart.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError, createEngine, createMemoryStore } from '@cairn/core';
import { createOutageLog, errorCause } from '@cairn/core/backend';

const refused = (port: number) => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });

describe('errorCause', () => {
  it('is the innermost cause code, whatever operation the outer messages name', () => {
    const a = new CairnError('STORE_ERROR', 'runs.claim failed: connect ECONNREFUSED', { cause: refused(5432) });
    const b = new CairnError('STORE_ERROR', 'steps.insert failed: connect ECONNREFUSED', { cause: refused(5432) });
    assert.equal(errorCause(a), 'ECONNREFUSED');
    assert.equal(errorCause(a), errorCause(b));
  });

  it('without a code: the message with numbers blanked and a trailing parenthetical dropped', () => {
    assert.equal(errorCause(new Error('Missing lock for job 55. moveToFinished')), errorCause(new Error('Missing lock for job 61. moveToFinished')));
    assert.equal(errorCause(new Error('terminating connection (Queue: a, Worker: 1)')), errorCause(new Error('terminating connection (Queue: b, Worker: 2)')));
    assert.notEqual(errorCause(new Error('Connection terminated unexpectedly')), errorCause(new Error('Connection is closed.')));
  });
});

describe('createOutageLog', () => {
  it('writes each cause once per outage, then one line when it works again, then causes are new again', () => {
    const lines: string[] = [];
    let now = 1000;
    const log = createOutageLog(
      '[x]',
      (line) => lines.push(line),
      () => now,
    );
    for (let i = 0; i < 100; i++) log.report(refused(6000 + i));
    log.report(new Error('Connection terminated unexpectedly'));
    log.report(new Error('Connection terminated unexpectedly'));
    assert.equal(lines.length, 2);
    now = 1500;
    log.recovered();
    assert.equal(lines.length, 2, 'within a second of the last error the outage is not over yet');
    now = 4500;
    log.recovered();
    log.recovered();
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /^\[x\] works again after 3\.5 s of errors \(100 more with the same causes were not logged\)$/);
    log.report(refused(1));
    assert.equal(lines.length, 4);
  });
});

describe('createEngine startTimeoutMs', () => {
  for (const bad of [-1, Number.NaN, '5s', null]) {
    it(`refuses ${String(bad)} with INVALID_INPUT`, () => {
      assert.throws(
        () => createEngine({ store: createMemoryStore(), workflows: [], startTimeoutMs: bad as number }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT') && /startTimeoutMs/.test((error as Error).message),
      );
    });
  }
});
