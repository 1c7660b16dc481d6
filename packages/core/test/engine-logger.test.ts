import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { CairnError, createEngine, createMemoryStore, defineWorkflow, fromStringLogger } from '@cairn/core';

/** A real pino logger writing JSON lines into an array. */
function pinoToArray(level = 'info') {
  // biome-ignore lint/suspicious/noExplicitAny: parsed pino lines, whose fields (err.message, runId, ...) the assertions read directly
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

const until = async (what: () => boolean) => {
  for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(what(), 'condition not reached within 5 s');
};

describe('the engine logger', () => {
  it('a pino logger receives the data object (runId, error) and the message', async () => {
    const { logger, lines } = pinoToArray();
    const wf = defineWorkflow('logged', async (ctx) => ctx.step('one', () => 1));
    // A crash that is not a simulated one (a bug in a fault point) is logged as an abandoned execution.
    const engine = createEngine({
      store: createMemoryStore(),
      workflows: [wf],
      logger,
      faults: {
        hit: ({ point }) => {
          if (point === 'after-step-body') throw new Error('injected failure');
        },
      },
      recoveryIntervalMs: 60_000,
    });
    await engine.start();
    const { id } = await engine.startRun(wf, null, { mode: 'inline' });
    await until(() => lines.some((l) => l.level === 50));
    await engine.stop({ graceMs: 0 });
    const entry = lines.find((l) => l.level === 50);
    assert.ok(entry);
    assert.equal(entry.msg, `Run ${id}: execution abandoned`);
    assert.equal(entry.runId, id);
    assert.equal(entry.workflow, 'logged');
    assert.equal(entry.err?.message, 'injected failure');
  });

  it('a warning for a version this worker does not know carries the run id', async () => {
    const { logger, lines } = pinoToArray();
    const store = createMemoryStore();
    const v1 = defineWorkflow('versioned', async () => 1, { version: '1' });
    const v2 = defineWorkflow('versioned', async () => 2, { version: '2' });
    // Due at once: recovery hands it to a worker that only knows version 2.
    const old = createEngine({ store, workflows: [v1], logger, recoveryIntervalMs: 60_000, timings: { startGraceMs: 0 } });
    await old.start({ workers: false });
    const { id } = await old.startRun(v1, null, { mode: 'queued' });
    const other = createEngine({ store, workflows: [v2], logger, recoveryIntervalMs: 60_000 });
    await other.start();
    try {
      await other.recover();
      await until(() => lines.some((l) => l.level === 40 && l.runId === id));
    } finally {
      await Promise.all([old.stop(), other.stop()]);
    }
    const entry = lines.find((l) => l.level === 40 && l.runId === id)!;
    assert.equal(entry.workflow, 'versioned');
    assert.equal(entry.version, '1');
    assert.match(entry.msg, /is not registered on this worker/);
  });

  it('at debug, run and step lifecycle entries carry ids and no payload unless logPayloads is set', async () => {
    const wf = defineWorkflow('payloads', async (_ctx, input: { secret: string }) => ({ echoed: input.secret }));
    for (const logPayloads of [false, true]) {
      const { logger, lines } = pinoToArray('debug');
      const engine = createEngine({ store: createMemoryStore(), workflows: [wf], logger, logPayloads, recoveryIntervalMs: 60_000 });
      await engine.start();
      try {
        const { id } = await engine.startRun(wf, { secret: 'hunter2' });
        await engine.result(id, { timeout: '10s' });
      } finally {
        await engine.stop();
      }
      assert.deepEqual(
        lines.filter((l) => l.level >= 30).map((l) => l.type),
        ['run.created', 'run.completed'],
      );
      assert.deepEqual(
        lines.filter((l) => l.level === 20).map((l) => l.type),
        ['run.started'],
      );
      assert.equal(
        lines.some((l) => JSON.stringify(l).includes('hunter2')),
        logPayloads,
        `logPayloads: ${logPayloads}`,
      );
      if (logPayloads) assert.deepEqual(lines.find((l) => l.type === 'run.completed')?.output, { echoed: 'hunter2' });
    }
  });

  it('fromStringLogger passes message first and data second, from its level up', () => {
    const calls: unknown[][] = [];
    const target = {
      debug: (...args: unknown[]) => void calls.push(['debug', ...args]),
      info: (...args: unknown[]) => void calls.push(['info', ...args]),
      warn: (...args: unknown[]) => void calls.push(['warn', ...args]),
      error: (...args: unknown[]) => void calls.push(['error', ...args]),
    };
    const logger = fromStringLogger(target, { prefix: '[x] ' });
    logger.debug?.({ runId: 'r' }, 'dropped');
    logger.info?.({ runId: 'r' }, 'kept');
    logger.error({ runId: 'r', n: 1 }, 'bad');
    assert.deepEqual(calls, [
      ['info', '[x] kept', { runId: 'r' }],
      ['error', '[x] bad', { runId: 'r', n: 1 }],
    ]);
    assert.equal(logger.isLevelEnabled?.('debug'), false);
    assert.equal(fromStringLogger(target, { level: 'debug' }).isLevelEnabled?.('debug'), true);
  });

  it('a logger of the wrong shape is refused with INVALID_INPUT', () => {
    for (const bad of [null, 'console', { warn: () => {} }, { warn: 1, error: () => {} }]) {
      assert.throws(
        () => createEngine({ store: createMemoryStore(), workflows: [], logger: bad as never }),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT'),
      );
    }
  });
});
