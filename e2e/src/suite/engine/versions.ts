import assert from 'node:assert/strict';
import { defineWorkflow } from '@cairn/core';
import { CONTINUED_AS } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld, type EngineWorld } from './engine-world.js';

const versioned = (version: string) =>
  defineWorkflow(
    'versioned',
    async (ctx) => {
      const made = await ctx.step(`made-by-${version}`, () => version);
      await ctx.sleep('nap', '1h');
      return { made, replayedBy: version };
    },
    { version },
  );

/** The ids of every run of `workflow` in the store, newest first. */
async function runIds(w: EngineWorld, workflow: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await w.raw.runs.list({ workflow, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    ids.push(...page.runs.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

/** A run that sleeps, starts a child, then continues as new once: what a run in flight starts itself. */
const relayKid = defineWorkflow('relay-kid', async (ctx, n: number) => ctx.step('double', () => n * 2));
const relay = defineWorkflow('relay', async (ctx, input: { again: boolean }) => {
  await ctx.sleep('nap', '1h');
  const kid = await ctx.child(relayKid, 21);
  if (input.again) return ctx.continueAsNew({ again: false });
  return { kid };
});

/** Engine scenarios: versions. */
export const versionsEngineGroup: CaseGroup = caseGroup('engine.versions', 'engine: versions', [
  conformanceCase('engine start registers every version, active', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    assert.deepEqual((await w.raw.versions.list('versioned')).map((v) => [v.version, v.status]).sort(), [
      ['1', 'active'],
      ['2', 'active'],
    ]);
  }),

  conformanceCase('new runs start on the version listed last; each run replays on its own version', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    const latest = await w.engine.startRun('versioned', null);
    const pinned = await w.engine.startRun('versioned', null, { version: '1' });
    assert.equal((await w.raw.runs.get(latest.id))?.version, '2');
    assert.equal((await w.raw.runs.get(pinned.id))?.version, '1');
    assert.deepEqual((await w.runToEnd(latest.id)).output, { made: '2', replayedBy: '2' });
    assert.deepEqual((await w.runToEnd(pinned.id)).output, { made: '1', replayedBy: '1' });
  }),

  conformanceCase('a worker without the run’s version steps aside; a worker with it completes the run', async (env) => {
    const w = await engineWorld(env, [versioned('1')]);
    const handle = await w.engine.startRun('versioned', null);
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    await w.engine.stop();
    // A newer deploy that only knows version 2 must not fail or corrupt the version-1 run.
    const newer = await w.startEngine([versioned('2')]);
    await w.runUntil('the newer worker met the run', async () => ((await w.raw.runs.get(handle.id))?.fence ?? 0) >= 2);
    await w.settle();
    assert.equal((await w.raw.runs.get(handle.id))?.status, 'waiting');
    await newer.stop();
    await w.startEngine([versioned('1'), versioned('2')]);
    assert.deepEqual((await w.runToEnd(handle.id)).output, { made: '1', replayedBy: '1' });
  }),

  conformanceCase(
    'a retired version refuses new starts (nothing written); the default goes to the newest active one; its suspended runs complete',
    async (env) => {
      const w = await engineWorld(env, [versioned('1'), versioned('2'), versioned('3')]);
      const onTwo = await w.engine.startRun('versioned', null, { version: '2' });
      const onThree = await w.engine.startRun('versioned', null);
      assert.equal((await w.raw.runs.get(onThree.id))?.version, '3');
      await w.runUntil(
        'both runs sleep',
        async () => (await w.raw.runs.get(onTwo.id))?.status === 'waiting' && (await w.raw.runs.get(onThree.id))?.status === 'waiting',
      );

      // Retired by this engine's API, and by another process (an operator's CLI) straight in the store.
      await w.engine.versions.setStatus('versioned', '3', 'retired');
      await w.raw.versions.setStatus('versioned', '2', 'retired', env.t0 + 1);
      const before = await runIds(w, 'versioned');
      for (const version of ['2', '3']) {
        const refused = await rejectsWithCode(w.engine.startRun('versioned', null, { version }), 'VERSION_RETIRED', `a start on retired version ${version}`);
        assert.deepEqual(refused.data, { workflow: 'versioned', version });
      }
      assert.deepEqual(await runIds(w, 'versioned'), before, 'a refused start writes no run');
      const defaulted = await w.engine.startRun('versioned', null);
      assert.equal((await w.raw.runs.get(defaulted.id))?.version, '1', 'the newest version still active');

      // Runs pinned to the retired versions go on.
      assert.deepEqual((await w.runToEnd(onTwo.id)).output, { made: '2', replayedBy: '2' });
      assert.deepEqual((await w.runToEnd(onThree.id)).output, { made: '3', replayedBy: '3' });
      assert.deepEqual((await w.runToEnd(defaulted.id)).output, { made: '1', replayedBy: '1' });

      // Active again: new starts go back to it.
      await w.engine.versions.setStatus('versioned', '3', 'active');
      assert.equal((await w.raw.runs.get((await w.engine.startRun('versioned', null)).id))?.version, '3');
    },
  ),

  conformanceCase('every version retired: startRun fails VERSION_RETIRED and writes nothing; a repeated idempotency key still finds its run', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    const keyed = await w.engine.startRun('versioned', null, { idempotencyKey: 'order-1' });
    await w.runUntil('the keyed run sleeps', async () => (await w.raw.runs.get(keyed.id))?.status === 'waiting');
    await w.engine.versions.setStatus('versioned', '1', 'retired');
    await w.engine.versions.setStatus('versioned', '2', 'retired');
    const before = await runIds(w, 'versioned');
    const refused = await rejectsWithCode(w.engine.startRun('versioned', null), 'VERSION_RETIRED', 'a start with every version retired');
    assert.deepEqual(refused.data, { workflow: 'versioned', version: null });
    await rejectsWithCode(w.engine.startRun('versioned', null, { idempotencyKey: 'order-2' }), 'VERSION_RETIRED', 'a keyed start');
    await rejectsWithCode(w.engine.startRun('versioned', null, { version: '1', mode: 'inline' }), 'VERSION_RETIRED', 'an inline start on version 1');
    assert.deepEqual(await runIds(w, 'versioned'), before, 'no run written');
    assert.equal(await w.raw.runs.findByIdempotencyKey('versioned', 'order-2'), undefined);
    // Not a new start: the run that holds the key is returned, as for any repeated key.
    const again = await w.engine.startRun('versioned', null, { idempotencyKey: 'order-1' });
    assert.deepEqual([again.id, again.created], [keyed.id, false]);
    assert.deepEqual((await w.runToEnd(keyed.id)).output, { made: '2', replayedBy: '2' });
  }),

  conformanceCase('a run in flight goes on with every version retired: its child and its continue-as-new start', async (env) => {
    const w = await engineWorld(env, [relay, relayKid]);
    const first = await w.engine.startRun(relay, { again: true });
    await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(first.id))?.status === 'waiting');
    await w.engine.versions.setStatus('relay', '1', 'retired');
    await w.engine.versions.setStatus('relay-kid', '1', 'retired');
    await rejectsWithCode(w.engine.startRun(relayKid, 1), 'VERSION_RETIRED', 'an outside start of the child workflow');
    const ended = await w.runToEnd(first.id);
    assert.equal(ended.status, 'completed');
    const successor = (ended.output as Record<string, unknown>)[CONTINUED_AS] as string;
    assert.equal(typeof successor, 'string', 'the run continued as new');
    const last = await w.runToEnd(successor);
    assert.deepEqual([last.status, last.version, last.output], ['completed', '1', { kid: 42 }]);
    assert.equal((await runIds(w, 'relay-kid')).length, 2, 'one child per run of the chain');
  }),

  conformanceCase('versions.summary: per version, its status, the runs in flight and the oldest of them', async (env) => {
    const w = await engineWorld(env, [versioned('1'), versioned('2')]);
    const a = await w.engine.startRun('versioned', null, { version: '1' });
    await w.clock.advance(1_000);
    const b = await w.engine.startRun('versioned', null, { version: '1' });
    const c = await w.engine.startRun('versioned', null);
    const ended = await w.engine.startRun('versioned', null);
    await w.runUntil('the runs sleep', async () => {
      for (const id of [a.id, b.id, c.id, ended.id]) if ((await w.raw.runs.get(id))?.status !== 'waiting') return false;
      return true;
    });
    await w.engine.cancel(ended.id);
    await w.runUntil('the cancel lands', async () => (await w.raw.runs.get(ended.id))?.status === 'cancelled');
    await w.engine.versions.setStatus('versioned', '1', 'retired');
    const summary = await w.engine.versions.summary('versioned');
    assert.equal(summary.workflow, 'versioned');
    assert.equal(summary.truncated, false);
    assert.equal(summary.runsRead, 3);
    assert.deepEqual(
      summary.versions.map((v) => [v.version, v.status, v.inFlight, v.oldestInFlight?.runId ?? null]),
      [
        ['1', 'retired', 2, a.id],
        ['2', 'active', 1, c.id],
      ],
    );
    assert.equal(summary.versions[0]?.oldestInFlight?.createdAt, (await w.raw.runs.get(a.id))?.createdAt);
    const capped = await w.engine.versions.summary('versioned', { maxRuns: 2 });
    assert.equal(capped.truncated, true);
    assert.equal(capped.runsRead, 2);
    assert.deepEqual((await w.engine.versions.summary('nothing-here')).versions, []);
  }),
]);
