import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type Json, type WorkflowDefinition } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { engineWorld, type EngineWorld } from '../engine/engine-world.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { BAD_IDENTIFIERS, MALFORMED_IDENTIFIERS, NOT_STRINGS, show } from '../fixtures/hostile-arguments.js';
import { snapshotRun } from '../fixtures/run-fixtures.js';

/** A run that completed with an output, and one that waits for the event `go`. */
async function twoRuns(w: EngineWorld, wf: WorkflowDefinition<{ finish: boolean }, unknown>) {
  const done = await w.engine.startRun(wf, { finish: true });
  const waiting = await w.engine.startRun(wf, { finish: false });
  await w.runToEnd(done.id);
  await w.runUntil('the second run waits for its event', async () => (await w.raw.runs.get(waiting.id))?.status === 'waiting');
  return { done: done.id, waiting: waiting.id };
}

const waitsOrFinishes = defineWorkflow('waits-or-finishes', async (ctx, input: { finish: boolean }) => {
  await ctx.setState('progress', 'started');
  const first = await ctx.step('first', () => 'first');
  if (input.finish) return { secret: 'output of the finished run', first };
  return { got: await ctx.waitForEvent('go') };
});

/**
 * Asserts that `call` rejects with `INVALID_INPUT` naming `argument`, and that it made no store
 * call at all (the check runs before the store is touched).
 */
async function refused(w: EngineWorld, call: () => Promise<unknown>, argument: string, what: string): Promise<CairnError> {
  await w.settle();
  w.store.reset();
  let error: CairnError;
  try {
    // A synchronous throw counts as a refusal too.
    error = await rejectsWithCode(Promise.resolve().then(call), 'INVALID_INPUT', what);
  } finally {
    await w.settle();
  }
  assert.match(error.message, new RegExp(argument.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `${what}: the message names ${argument}`);
  assert.deepEqual(w.store.calls, [], `${what}: no store call may happen before the check`);
  return error;
}

/** Adversarial: arguments of the wrong runtime type or malformed strings, at every engine entry point. */
export const hostileArgumentsGroup: CaseGroup = caseGroup('adversarial.hostile-arguments', 'adversarial: hostile arguments at the engine boundary', [
  conformanceCase('a run id that is not a well-formed string is refused by every method, and nothing changes', async (env) => {
    const w = await engineWorld(env, [waitsOrFinishes]);
    const runs = await twoRuns(w, waitsOrFinishes);
    const before = [await snapshotRun(w.raw, runs.done, ['go']), await snapshotRun(w.raw, runs.waiting, ['go'])];
    const e = w.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const bad of BAD_IDENTIFIERS) {
      const id = show(bad);
      await refused(w, () => e.getRun!(bad), 'runId', `getRun(${id})`);
      await refused(w, () => e.result!(bad), 'runId', `result(${id})`);
      await refused(w, () => e.result!(bad, { timeout: 1 }), 'runId', `result(${id}, { timeout })`);
      await refused(w, () => e.sendEvent!(bad, 'go', 'hijacked'), 'runId', `sendEvent(${id})`);
      await refused(w, () => e.cancel!(bad), 'runId', `cancel(${id})`);
      await refused(w, () => e.deleteRun!(bad), 'runId', `deleteRun(${id})`);
      await refused(w, () => e.deleteRun!(bad, { force: true }), 'runId', `deleteRun(${id}, { force })`);
      await refused(w, () => e.steps!(bad), 'runId', `steps(${id})`);
      await refused(w, () => e.state!(bad), 'runId', `state(${id})`);
      await refused(w, () => e.history!(bad), 'runId', `history(${id})`);
    }
    // An id longer than any run id can be is refused too, not looked up.
    await refused(w, () => e.getRun!('r'.repeat(10_000)), 'runId', 'getRun of a 10 000-character id');
    const after = [await snapshotRun(w.raw, runs.done, ['go']), await snapshotRun(w.raw, runs.waiting, ['go'])];
    assert.deepEqual(after, before, 'no run may change: nothing deleted, cancelled or delivered');
    // Both runs still work as they did.
    assert.deepEqual(await w.engine.sendEvent(runs.waiting, 'go', 'real'), { delivered: true, duplicate: false, seq: 1 });
    assert.deepEqual((await w.runToEnd(runs.waiting)).output, { got: 'real' });
  }),

  conformanceCase('the arguments of sendEvent, deleteRun and result are checked before the store is touched', async (env) => {
    const w = await engineWorld(env, [waitsOrFinishes]);
    const runs = await twoRuns(w, waitsOrFinishes);
    const before = await snapshotRun(w.raw, runs.waiting, ['go', ...MALFORMED_IDENTIFIERS]);
    const e = w.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const bad of [...BAD_IDENTIFIERS, 'e'.repeat(501)]) {
      await refused(w, () => e.sendEvent!(runs.waiting, bad, 'payload'), 'event name', `sendEvent(run, ${show(bad)})`);
    }
    for (const bad of ['yes', 1, { $gt: '' }, null]) {
      await refused(w, () => e.deleteRun!(runs.done, { force: bad }), 'force', `deleteRun(run, { force: ${show(bad)} })`);
    }
    for (const bad of ['force', 42, ['force'], { force: true, extra: 1 }]) {
      await refused(w, () => e.deleteRun!(runs.done, bad), 'deleteRun', `deleteRun(run, ${show(bad)})`);
    }
    for (const bad of ['soon', 42, { timout: 5 }]) {
      await refused(w, () => e.result!(runs.done, bad), 'result', `result(run, ${show(bad)})`);
    }
    assert.deepEqual(await snapshotRun(w.raw, runs.waiting, ['go', ...MALFORMED_IDENTIFIERS]), before);
    assert.ok(await w.raw.runs.get(runs.done), 'the finished run was not deleted');
  }),

  conformanceCase('listRuns refuses filters of the wrong type instead of matching everything', async (env) => {
    const w = await engineWorld(env, [waitsOrFinishes]);
    await twoRuns(w, waitsOrFinishes);
    const e = w.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const bad: Array<[unknown, string]> = [
      ...NOT_STRINGS.filter((v) => v !== undefined).map((v): [unknown, string] => [{ workflow: v }, 'workflow']),
      ...MALFORMED_IDENTIFIERS.map((v): [unknown, string] => [{ workflow: v }, 'workflow']),
      [{ workflow: '' }, 'workflow'],
      [{ status: { $ne: 'x' } }, 'status'],
      [{ status: 'finished' }, 'status'],
      [{ status: ['completed', { $gt: '' }] }, 'status'],
      [{ status: [] }, 'status'],
      [{ createdAfter: '0' }, 'createdAfter'],
      [{ createdAfter: { $gt: 0 } }, 'createdAfter'],
      [{ createdBefore: Number.NaN }, 'createdBefore'],
      [{ limit: '5' }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ cursor: { $gt: '' } }, 'cursor'],
      [{ cursor: 'not a cursor' }, 'cursor'],
      [{ workflo: 'waits-or-finishes' }, 'workflo'],
      ['waits-or-finishes', 'listRuns'],
      [['waits-or-finishes'], 'listRuns'],
    ];
    for (const [query, argument] of bad) await refused(w, () => e.listRuns!(query), argument, `listRuns(${show(query)})`);
    // The filters themselves still work.
    assert.equal((await w.engine.listRuns({ workflow: 'waits-or-finishes' })).runs.length, 2);
    assert.equal((await w.engine.listRuns({ workflow: 'waits-or-finishes', status: ['waiting'] })).runs.length, 1);
    assert.equal((await w.engine.listRuns({ workflow: 'no-such-workflow' })).runs.length, 0);
    assert.equal((await w.engine.listRuns()).runs.length, 2);
  }),

  conformanceCase('startRun checks the workflow, the idempotency key, the version and its options, and writes nothing', async (env) => {
    const w = await engineWorld(env, [waitsOrFinishes]);
    const e = w.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const input = { finish: true };
    for (const bad of BAD_IDENTIFIERS) {
      await refused(w, () => e.startRun!(bad, input), 'workflow', `startRun(${show(bad)})`);
      if (bad !== undefined) {
        await refused(w, () => e.startRun!(waitsOrFinishes, input, { idempotencyKey: bad }), 'idempotencyKey', `idempotencyKey ${show(bad)}`);
        await refused(w, () => e.startRun!(waitsOrFinishes, input, { version: bad }), 'version', `version ${show(bad)}`);
      }
    }
    await refused(w, () => e.startRun!({ name: { $gt: '' }, version: '1' }, input), 'workflow', 'a definition whose name is not a string');
    await refused(w, () => e.startRun!(waitsOrFinishes, input, { idempotencyKey: 'k'.repeat(513) }), 'idempotencyKey', 'an overlong key');
    await refused(w, () => e.startRun!(waitsOrFinishes, input, { mode: { $gt: '' } }), 'mode', 'a mode that is not a string');
    // A misspelt option would otherwise be ignored silently (a run started twice, not once).
    await refused(w, () => e.startRun!(waitsOrFinishes, input, { idempotencykey: 'order-1' }), 'idempotencykey', 'a misspelt option');
    await refused(w, () => e.startRun!(waitsOrFinishes, input, 'inline'), 'startRun', 'options that are not an object');
    assert.deepEqual((await w.raw.runs.list({})).runs, [], 'no run was created');
  }),

  conformanceCase('defineWorkflow refuses names and versions that no backend could store exactly', async () => {
    for (const bad of BAD_IDENTIFIERS) {
      assert.throws(
        () => defineWorkflow(bad as string, async () => null),
        (err) => CairnError.is(err, 'INVALID_INPUT'),
        `name ${show(bad)}`,
      );
      if (bad !== undefined) {
        assert.throws(
          () => defineWorkflow('ok', async () => null, { version: bad as string }),
          (err) => CairnError.is(err, 'INVALID_INPUT'),
          `version ${show(bad)}`,
        );
      }
    }
  }),

  conformanceCase('startRun(wf, undefined) and startRun(wf) hand the workflow null, on the first execution and on replay', async (env) => {
    const seen: Array<[string, unknown]> = [];
    const wf = defineWorkflow('sees-its-input', async (ctx, input: unknown) => {
      seen.push(['before', input]);
      await ctx.sleep('replay-after-this', 1_000);
      seen.push(['after', input]);
      return { input: input as Json, isNull: input === null };
    });
    const w = await engineWorld(env, [wf]);
    const e = w.engine as unknown as { startRun(...args: unknown[]): Promise<{ id: string }> };
    for (const start of [() => e.startRun(wf, undefined), () => e.startRun(wf), () => e.startRun(wf, undefined, undefined)]) {
      seen.length = 0;
      const { id } = await start();
      const run = await w.runToEnd(id);
      assert.equal(run.status, 'completed');
      assert.deepStrictEqual(run.output, { input: null, isNull: true });
      assert.strictEqual((await w.engine.getRun(id))?.input, null, 'the stored input is null');
      // The first execution and the replay after the sleep saw the same value.
      assert.deepStrictEqual(
        seen.filter(([when]) => when === 'after').map(([, input]) => input),
        [null],
      );
      assert.ok(
        seen.every(([, input]) => input === null),
        `every execution saw null: ${JSON.stringify(seen)}`,
      );
    }
  }),

  conformanceCase('lone surrogates and NUL inside payloads round-trip exactly (inputs, outputs, events, state, errors)', async (env) => {
    const hostile = { 'key \uD800': 'x\uD800', 'nul\u0000key': 'a\u0000b', list: ['\uDC00y', '\u0000', 'pair 𝄞 ok'], nested: { '\uDBFF': '\uDBFF' } };
    const wf = defineWorkflow('hostile-payloads', async (ctx, input: Json) => {
      const step = await ctx.step('echo', () => ({ echoed: input }));
      await ctx.setState('hostile', input);
      const event = await ctx.waitForEvent('payload');
      let message = '';
      try {
        await ctx.step('throws', () => {
          throw new Error('message with \uD800 and \u0000 inside');
        });
      } catch (error) {
        message = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
      }
      return { input, step, event, message } as Json;
    });
    const w = await engineWorld(env, [wf]);
    const h = await w.engine.startRun(wf, hostile);
    await w.runUntil('the run waits for its event', async () => (await w.raw.runs.get(h.id))?.status === 'waiting');
    assert.deepEqual(await w.engine.sendEvent(h.id, 'payload', hostile), { delivered: true, duplicate: false, seq: 1 });
    const run = await w.runToEnd(h.id);
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    assert.deepStrictEqual(run.input, hostile, 'run input');
    assert.deepStrictEqual(run.output, { input: hostile, step: { echoed: hostile }, event: hostile, message: 'message with \uD800 and \u0000 inside' });
    assert.deepStrictEqual((await w.engine.state(h.id)).hostile, hostile, 'state value');
    assert.deepStrictEqual((await w.raw.events.get(h.id, 'payload', 1))?.payload, hostile, 'event payload');
    assert.deepStrictEqual((await w.engine.steps(h.id)).find((s) => s.name === 'echo')?.output, { echoed: hostile }, 'step output');
  }),
]);
