import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** `engine.findRun` and `engine.listRuns` filters and summaries on every backend. */
export const findRunsGroup: CaseGroup = caseGroup('engine.find-runs', 'engine: findRun and listRuns', [
  conformanceCase('findRun finds a run by workflow and idempotency key, as a whole record', async (env) => {
    const wf = defineWorkflow('find-me', async (_ctx, input: { order: string }) => ({ charged: input.order }));
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, { order: 'o-1' }, { idempotencyKey: 'order o-1' });
    await w.runToEnd(handle.id);
    const found = await w.engine.findRun('find-me', 'order o-1');
    assert.equal(found?.id, handle.id);
    assert.deepEqual([found?.input, found?.output], [{ order: 'o-1' }, { charged: 'o-1' }]);
    assert.equal(await w.engine.findRun('find-me', 'order o-2'), undefined);
    assert.equal(await w.engine.findRun('other', 'order o-1'), undefined);
    await rejectsWithCode(w.engine.findRun('find-me', '' as string), 'INVALID_INPUT', 'an empty key');
    await rejectsWithCode(w.engine.findRun(42 as never, 'k'), 'INVALID_INPUT', 'a workflow that is not a string');
  }),

  conformanceCase('listRuns filters by parent and by idempotency key and returns summaries without payloads', async (env) => {
    const kid = defineWorkflow('list-kid', async (_ctx, n: number) => n * 2);
    const parent = defineWorkflow('list-parent', async (ctx) => {
      const a = await ctx.child(kid, 1, { name: 'one' });
      const b = await ctx.child(kid, 2, { name: 'two' });
      return a + b;
    });
    const w = await engineWorld(env, [parent, kid]);
    const p = await w.engine.startRun(parent, null, { idempotencyKey: 'p-1' });
    const other = await w.engine.startRun(kid, 5);
    await w.runToEnd(p.id);
    await w.runToEnd(other.id);
    const kids = (await w.engine.listRuns({ parentRunId: p.id })).runs;
    assert.equal(kids.length, 2);
    assert.ok(kids.every((k) => k.parent?.runId === p.id && k.status === 'completed'));
    assert.deepEqual(
      (await w.engine.listRuns({ parentRunId: p.id, workflow: 'list-kid', status: 'completed' })).runs.map((r) => r.id),
      kids.map((k) => k.id),
    );
    assert.deepEqual(
      (await w.engine.listRuns({ workflow: 'list-parent', idempotencyKey: 'p-1' })).runs.map((r) => r.id),
      [p.id],
    );
    for (const run of (await w.engine.listRuns()).runs) assert.ok(!('input' in run) && !('output' in run), 'a summary has no payloads');
    await rejectsWithCode(w.engine.listRuns({ idempotencyKey: 'p-1' }), 'INVALID_INPUT', 'a key without a workflow');
    await rejectsWithCode(w.engine.listRuns({ parentRunId: 7 } as never), 'INVALID_INPUT', 'a parent that is not a string');
  }),
]);
