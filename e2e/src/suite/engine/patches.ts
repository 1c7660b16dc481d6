import assert from 'node:assert/strict';
import { checkWorkflowCode, defineEvent, defineWorkflow, type StepRecord, type WorkflowDefinition } from '@cairn/core';
import type { FaultPoint } from '@cairn/core/testing';
import { countingStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { engineWorld, type EngineWorld } from './engine-world.js';

const confirmed = defineEvent<{ ok: boolean }>('confirmed');

/** The builds of the `signup` workflow: before the change, patched, patch deprecated, changed without a patch. */
type Build = 'old' | 'patched' | 'deprecated' | 'unguarded';

/** Bodies that ran, by name, across every engine of a case. */
type Ran = string[];

/** The issue's `signup`: a new step `normalise email` before the account is created, guarded (or not) by patch `normalise-email`. */
function signup(build: Build, ran: Ran): WorkflowDefinition<{ email: string }, string> {
  return defineWorkflow('signup', async (ctx, input: { email: string }) => {
    let email = input.email;
    const newPath = build === 'unguarded' || (build === 'patched' && ctx.patched('normalise-email'));
    if (build === 'deprecated') ctx.deprecatePatch('normalise-email');
    if (newPath || build === 'deprecated') email = await ctx.step('normalise email', () => (ran.push('normalise'), email.toLowerCase()));
    const account = await ctx.step('create account', () => (ran.push('create'), `acct:${email}`));
    const event = await ctx.waitForEvent(confirmed);
    return `${account}:${event.ok}`;
  });
}

/** Starts a run of `wf` on `engine` and lets it work until it waits for its event. */
async function suspend(
  w: EngineWorld,
  engine: { startRun: EngineWorld['engine']['startRun'] },
  wf: WorkflowDefinition<{ email: string }, string>,
  email: string,
) {
  const handle = await engine.startRun(wf, { email });
  await w.runUntil(`run ${handle.id} waits for its event`, async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
  return handle.id;
}

const markers = (steps: readonly StepRecord[]) => steps.filter((s) => s.kind === 'patch').map((s) => [s.key, s.name, s.seq, s.status]);

/** Every record the store holds for `runIds`: the run, its steps and its attempts (compared before and after a check). */
async function snapshot(w: EngineWorld, runIds: readonly string[]): Promise<string> {
  const out: unknown[] = [];
  for (const id of runIds) out.push(await w.raw.runs.get(id), await w.raw.steps.load(id), await w.raw.history.list(id), await w.raw.state.get(id));
  return JSON.stringify(out);
}

/** Engine scenarios: patch markers (`ctx.patched`, `ctx.deprecatePatch`) and the pre-deploy check over the store. */
export const patchesGroup: CaseGroup = caseGroup('engine.patches', 'engine: patch markers and the pre-deploy check', [
  conformanceCase(
    'a run suspended before a patch takes the old path under the patched code; a run started after takes the new path and records the marker',
    async (env) => {
      const ran: Ran = [];
      const w = await engineWorld(env, [signup('old', ran)]);
      const before = await suspend(w, w.engine, signup('old', ran), 'A@X.IO');
      await w.engine.stop();
      const patched = await w.startEngine([signup('patched', ran)]);
      const after = await suspend(w, patched, signup('patched', ran), 'B@X.IO');
      assert.deepEqual(
        markers(await w.raw.steps.load(after)),
        [['patch:normalise-email', 'normalise-email', 0, 'succeeded']],
        'the new run records the marker first',
      );
      assert.deepEqual(markers(await w.raw.steps.load(before)), [], 'the run on the old path records no marker');
      for (const id of [before, after]) await patched.sendEvent(id, confirmed, { ok: true });
      const old = await w.runToEnd(before);
      const fresh = await w.runToEnd(after);
      assert.deepEqual([old.status, old.output], ['completed', 'acct:A@X.IO:true'], JSON.stringify(old.error));
      assert.deepEqual([fresh.status, fresh.output], ['completed', 'acct:b@x.io:true'], JSON.stringify(fresh.error));
      assert.deepEqual(ran, ['create', 'normalise', 'create'], 'each body once; the old run never normalised');
      assert.deepEqual(
        (await w.raw.steps.load(before)).map((s) => [s.kind, s.key]),
        [
          ['task', 'create account'],
          ['event', 'event:confirmed'],
        ],
      );
    },
  ),

  conformanceCase(
    'a run resumed by code without the patch it recorded fails NON_DETERMINISM naming the marker; unguarded code fails naming its new call',
    async (env) => {
      const ran: Ran = [];
      const w = await engineWorld(env, [signup('patched', ran)]);
      const withMarker = await suspend(w, w.engine, signup('patched', ran), 'A@X.IO');
      await w.engine.stop();
      const old = await w.startEngine([signup('old', ran)]);
      await old.sendEvent(withMarker, confirmed, { ok: true });
      const rolledBack = await w.runToEnd(withMarker);
      assert.equal(rolledBack.status, 'failed');
      assert.equal(rolledBack.error?.code, 'NON_DETERMINISM');
      const data = rolledBack.error?.data as Record<string, unknown>;
      assert.deepEqual(data.recorded, { kind: 'patch', key: 'patch:normalise-email', name: 'normalise-email' });
      assert.match(rolledBack.error?.message ?? '', /patch marker/);

      const plain = await suspend(w, old, signup('old', ran), 'C@X.IO');
      await old.stop();
      const unguarded = await w.startEngine([signup('unguarded', ran)]);
      await unguarded.sendEvent(plain, confirmed, { ok: true });
      const diverged = await w.runToEnd(plain);
      assert.equal(diverged.error?.code, 'NON_DETERMINISM');
      const divergence = diverged.error?.data as Record<string, unknown>;
      assert.deepEqual([divergence.reason, divergence.seq], ['different-call', 0]);
      assert.deepEqual(divergence.recorded, { kind: 'task', key: 'create account', name: 'create account' });
      assert.deepEqual(divergence.called, { kind: 'task', key: 'normalise email', name: 'normalise email' });
      assert.equal(ran.filter((r) => r === 'normalise').length, 1, 'no body ran for the diverging call');
    },
  ),

  ...(['before-checkpoint', 'after-checkpoint'] as FaultPoint[]).map((point) =>
    conformanceCase(`a crash ${point} of the marker: the run resumes on the new path, one marker, each recorded body once`, async (env) => {
      const ran: Ran = [];
      const wf = signup('patched', ran);
      const faults = new CrashOnceAtSite({ point, stepKey: 'patch:normalise-email' });
      const w = await engineWorld(env, [wf], { faults });
      const handle = await w.engine.startRun(wf, { email: 'C@X.IO' });
      await w.runUntil(`a crash ${point} of the marker`, async () => faults.crashed !== undefined);
      await w.engine.stop();
      assert.equal(
        (await w.raw.steps.load(handle.id)).filter((s) => s.kind === 'patch').length,
        point === 'before-checkpoint' ? 0 : 1,
        `the marker is recorded only when the crash came after its checkpoint`,
      );
      const survivor = await w.startEngine([wf]);
      await w.runUntil('the run waits for its event', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      await survivor.sendEvent(handle.id, confirmed, { ok: true });
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.equal(run.output, 'acct:c@x.io:true', 'the new path');
      const steps = await w.raw.steps.load(handle.id);
      assert.deepEqual(markers(steps), [['patch:normalise-email', 'normalise-email', 0, 'succeeded']]);
      assert.deepEqual(
        steps.map((s) => [s.kind, s.key, s.seq]),
        [
          ['patch', 'patch:normalise-email', 0],
          ['task', 'normalise email', 1],
          ['task', 'create account', 2],
          ['event', 'event:confirmed', 3],
        ],
      );
      assert.deepEqual(
        ran.filter((r) => r === 'create'),
        ['create'],
        'the step after the marker ran once',
      );
      for (const key of ['normalise email', 'create account']) {
        const succeeded = (await w.raw.history.list(handle.id)).filter((a) => a.stepKey === key && a.status === 'succeeded');
        assert.equal(succeeded.length, 1, `${key}: one recorded success`);
      }
      assert.deepEqual((await checkWorkflowCode({ store: w.raw, workflows: [wf], recent: 1 })).counts.compatible, 1);
    }),
  ),

  conformanceCase('a marker inside one branch of a fan-out (asked twice): old-path and new-path runs replay exactly on another engine', async (env) => {
    const ran: Ran = [];
    const fan = (patched: boolean) =>
      defineWorkflow('fan-patch', async (ctx) => {
        const branches = await Promise.all(
          ['a', 'b', 'c'].map(async (id) => {
            const first = await ctx.step(`fetch-${id}`, () => (ran.push(`fetch-${id}`), id));
            const answers: boolean[] = [];
            for (let i = 0; i < 2; i += 1) answers.push(patched && id === 'b' && ctx.patched('b-extra'));
            if (answers[0]) await ctx.step('extra', () => (ran.push('extra'), 1));
            const last = await ctx.step(`save-${id}`, () => (ran.push(`save-${id}`), id));
            return `${first}${last}:${answers.join(',')}`;
          }),
        );
        await ctx.sleep('pause', '1h');
        return branches;
      });
    const w = await engineWorld(env, [fan(false)]);
    const old = await w.engine.startRun(fan(false), null);
    await w.runUntil('the old run sleeps', async () => (await w.raw.runs.get(old.id))?.status === 'waiting');
    await w.engine.stop();
    const patched = await w.startEngine([fan(true)]);
    const fresh = await patched.startRun(fan(true), null);
    await w.runUntil('the new run sleeps', async () => (await w.raw.runs.get(fresh.id))?.status === 'waiting');
    // The check agrees with the runs: both histories fit the patched code.
    const report = await checkWorkflowCode({ store: w.raw, workflows: [fan(true)] });
    assert.deepEqual(report.counts, { compatible: 2, diverges: 0, 'missing-version': 0, unreadable: 0 });
    // Another process resumes both.
    await patched.stop();
    await w.startEngine([fan(true)]);
    const oldEnd = await w.runToEnd(old.id);
    const freshEnd = await w.runToEnd(fresh.id);
    assert.deepEqual([oldEnd.status, oldEnd.output], ['completed', ['aa:false,false', 'bb:false,false', 'cc:false,false']], JSON.stringify(oldEnd.error));
    assert.deepEqual([freshEnd.status, freshEnd.output], ['completed', ['aa:false,false', 'bb:true,true', 'cc:false,false']], JSON.stringify(freshEnd.error));
    assert.equal(ran.filter((r) => r === 'extra').length, 1, 'only the new run took the new path, once');
    assert.equal(ran.length, 13, 'every body once: 6 per run and one extra');
    assert.deepEqual(markers(await w.raw.steps.load(old.id)), []);
    const freshMarkers = markers(await w.raw.steps.load(fresh.id));
    assert.equal(freshMarkers.length, 1, 'one marker although the branch asked twice');
    assert.deepEqual(freshMarkers[0]?.slice(0, 2), ['patch:b-extra', 'b-extra']);
  }),

  conformanceCase(
    'deprecatePatch replays a history with the marker and records none in new runs; a history from before the patch then diverges, and the check says so first',
    async (env) => {
      const ran: Ran = [];
      const w = await engineWorld(env, [signup('old', ran)]);
      const oldPath = await suspend(w, w.engine, signup('old', ran), 'O@X.IO');
      await w.engine.stop();
      const patched = await w.startEngine([signup('patched', ran)]);
      const withMarker = await suspend(w, patched, signup('patched', ran), 'A@X.IO');
      await patched.stop();
      const deprecated = await w.startEngine([signup('deprecated', ran)]);
      const without = await suspend(w, deprecated, signup('deprecated', ran), 'B@X.IO');
      assert.deepEqual(markers(await w.raw.steps.load(without)), [], 'deprecatePatch records nothing');
      assert.deepEqual(
        (await w.raw.steps.load(without)).map((s) => [s.key, s.seq]),
        [
          ['normalise email', 0],
          ['create account', 1],
          ['event:confirmed', 2],
        ],
      );
      const report = await checkWorkflowCode({ store: w.raw, workflows: [signup('deprecated', ran)] });
      const verdicts = new Map(report.runs.map((r) => [r.runId, r]));
      assert.equal(verdicts.get(withMarker)?.verdict, 'compatible');
      assert.equal(verdicts.get(without)?.verdict, 'compatible');
      assert.equal(verdicts.get(oldPath)?.verdict, 'diverges', 'a run on the old path is left: deprecating was too early');
      assert.equal(verdicts.get(oldPath)?.divergence?.called?.key, 'normalise email');
      for (const id of [withMarker, without, oldPath]) await deprecated.sendEvent(id, confirmed, { ok: false });
      assert.deepEqual((await w.runToEnd(withMarker)).output, 'acct:a@x.io:false');
      assert.deepEqual((await w.runToEnd(without)).output, 'acct:b@x.io:false');
      const early = await w.runToEnd(oldPath);
      assert.deepEqual([early.status, early.error?.code], ['failed', 'NON_DETERMINISM'], 'the check predicted it');
      assert.deepEqual(ran, ['create', 'normalise', 'create', 'normalise', 'create']);
    },
  ),

  conformanceCase('a bad patch id is INVALID_INPUT: the run fails with it and nothing is recorded', async (env) => {
    const cases: [string, unknown][] = [
      ['empty', ''],
      ['too long', 'x'.repeat(501)],
      ['not a string', 42],
      ['null', null],
    ];
    const defs = cases.flatMap(([label, id]) => [
      defineWorkflow(`patched-${label.replaceAll(' ', '-')}`, async (ctx) => {
        const answer = ctx.patched(id as string);
        await ctx.step('after', () => 1);
        return answer;
      }),
      defineWorkflow(`deprecate-${label.replaceAll(' ', '-')}`, async (ctx) => {
        ctx.deprecatePatch(id as string);
        await ctx.step('after', () => 1);
        return true;
      }),
    ]);
    const w = await engineWorld(env, defs);
    for (const def of defs) {
      const handle = await w.engine.startRun(def, null);
      const run = await w.runToEnd(handle.id);
      assert.deepEqual([run.status, run.error?.code], ['failed', 'INVALID_INPUT'], `${def.name}: ${JSON.stringify(run.error)}`);
      assert.deepEqual(await w.raw.steps.load(handle.id), [], `${def.name}: nothing recorded`);
    }
    // The longest id allowed is accepted.
    const longest = defineWorkflow('patched-longest', async (ctx) => ctx.patched('p'.repeat(500)));
    await w.engine.stop();
    const engine = await w.startEngine([longest]);
    const ok = await w.runToEnd((await engine.startRun(longest, null)).id);
    assert.deepEqual([ok.status, ok.output], ['completed', true], JSON.stringify(ok.error));
  }),

  conformanceCase(
    'checkWorkflowCode over the store: diverges for an unguarded change (naming the new call), compatible for the patched one, writes nothing; resumed, the patched build completes them',
    async (env) => {
      const ran: Ran = [];
      const w = await engineWorld(env, [signup('old', ran)]);
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) ids.push(await suspend(w, w.engine, signup('old', ran), `U${i}@X.IO`));
      await w.engine.stop();
      const before = await snapshot(w, ids);
      const counted = countingStore(w.raw);

      const unguarded = await checkWorkflowCode({ store: counted, workflows: [signup('unguarded', ran)] });
      assert.equal(unguarded.checked, 3);
      assert.deepEqual(unguarded.counts, { compatible: 0, diverges: 3, 'missing-version': 0, unreadable: 0 });
      assert.deepEqual(unguarded.runs.map((r) => r.runId).sort(), [...ids].sort());
      for (const run of unguarded.runs) {
        assert.equal(run.divergence?.reason, 'different-call');
        assert.equal(run.divergence?.seq, 0);
        assert.deepEqual(run.divergence?.called, { kind: 'task', key: 'normalise email', name: 'normalise email' });
        assert.deepEqual(run.divergence?.recorded, { kind: 'task', key: 'create account', name: 'create account' });
      }
      const patched = await checkWorkflowCode({ store: counted, workflows: [signup('patched', ran)] });
      assert.deepEqual(patched.counts, { compatible: 3, diverges: 0, 'missing-version': 0, unreadable: 0 });
      const missing = await checkWorkflowCode({ store: counted, workflows: [defineWorkflow('signup', async () => null, { version: '2' })] });
      assert.deepEqual(missing.counts, { compatible: 0, diverges: 0, 'missing-version': 3, unreadable: 0 });

      assert.deepEqual(
        counted.calls.filter((c) => c.write).map((c) => c.method),
        [],
        'the check only reads',
      );
      assert.ok(counted.calls.length > 0, 'the check read the store through the counting proxy');
      assert.equal(await snapshot(w, ids), before, 'every record is as it was');
      assert.deepEqual(ran, ['create', 'create', 'create'], 'the check ran no body');

      const engine = await w.startEngine([signup('patched', ran)]);
      for (const id of ids) await engine.sendEvent(id, confirmed, { ok: true });
      for (const [i, id] of ids.entries()) {
        const run = await w.runToEnd(id);
        assert.deepEqual([run.status, run.output], ['completed', `acct:U${i}@X.IO:true`], JSON.stringify(run.error));
      }
      assert.equal(
        (await checkWorkflowCode({ store: counted, workflows: [signup('unguarded', ran)], recent: 2 })).counts.diverges,
        2,
        'ended runs only on request',
      );
    },
  ),
]);
