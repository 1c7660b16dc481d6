// Patch markers (issue 27, part 1): a change guarded by ctx.patched(id) takes the new path in new
// runs and the old path in runs whose history was written without it, exactly, across crashes;
// ctx.deprecatePatch keeps both kinds of history replayable; a change without a patch fails with a
// divergence that names the call and the line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineEvent, defineWorkflow, type WorkflowDefinition } from '@cairn/core';
import { createFaults } from '@cairn/core/testing';
import { createFixture, type Fixture, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const confirmed = defineEvent<{ ok: boolean }>('confirmed');

type Build = 'old' | 'patched' | 'deprecated' | 'unguarded';

/** The `signup` workflow of the issue, as four builds: before the change, patched, patch deprecated, and changed without a patch. */
function signup(build: Build, ran: string[]): WorkflowDefinition<{ email: string }, string> {
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

async function suspendUnder(fx: Fixture, wf: WorkflowDefinition<{ email: string }, string>, email: string): Promise<string> {
  const h = await fx.engine.startRun(wf, { email });
  await waitForIdle(fx.inner, h.id);
  return h.id;
}

/** Stops `fx`'s engine and starts another build over the same store and clock. */
async function redeploy(fx: Fixture, wf: WorkflowDefinition<{ email: string }, string>): Promise<Fixture> {
  await fx.engine.stop();
  return createFixture({ workflows: [wf], counter: fx.counter, clock: fx.clock });
}

describe('patch markers', () => {
  it('a run suspended before the patch takes the old path; a run started after takes the new one and records the marker', async () => {
    const ran: string[] = [];
    let fx = await createFixture({ workflows: [signup('old', ran)] });
    try {
      const before = await suspendUnder(fx, signup('old', ran), 'A@X.IO');
      fx = await redeploy(fx, signup('patched', ran));
      const after = await suspendUnder(fx, signup('patched', ran), 'B@X.IO');
      const markers = (await fx.inner.steps.load(after)).filter((s) => s.kind === 'patch');
      assert.deepEqual(
        markers.map((s) => [s.key, s.seq, s.status]),
        [['patch:normalise-email', 0, 'succeeded']],
      );
      assert.equal((await fx.inner.steps.load(before)).filter((s) => s.kind === 'patch').length, 0, 'a run on the old path records no marker');
      for (const id of [before, after]) await fx.engine.sendEvent(id, confirmed, { ok: true });
      const old = await waitForStatus(fx.inner, before, ['completed', 'failed']);
      const fresh = await waitForStatus(fx.inner, after, ['completed', 'failed']);
      assert.equal(old.status, 'completed', JSON.stringify(old.error));
      assert.equal(old.output, 'acct:A@X.IO:true');
      assert.equal(fresh.status, 'completed', JSON.stringify(fresh.error));
      assert.equal(fresh.output, 'acct:b@x.io:true');
      assert.deepEqual(ran, ['create', 'normalise', 'create']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('the same change without a patch fails the suspended run with a divergence naming the new call and its line', async () => {
    const ran: string[] = [];
    let fx = await createFixture({ workflows: [signup('old', ran)] });
    try {
      const id = await suspendUnder(fx, signup('old', ran), 'A@X.IO');
      fx = await redeploy(fx, signup('unguarded', ran));
      await fx.engine.sendEvent(id, confirmed, { ok: true });
      const run = await waitForStatus(fx.inner, id, ['completed', 'failed']);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'NON_DETERMINISM');
      const data = run.error?.data as Record<string, unknown>;
      assert.equal(data.reason, 'different-call');
      assert.equal(data.seq, 0);
      assert.deepEqual(data.recorded, { kind: 'task', key: 'create account', name: 'create account' });
      assert.deepEqual(data.called, { kind: 'task', key: 'normalise email', name: 'normalise email' });
      assert.match(String(data.location), /engine-patches\.test\.ts:\d+:\d+$/);
      assert.match(run.error?.message ?? '', /ctx\.patched/);
      assert.deepEqual(ran, ['create'], 'no body ran for the diverging call');
    } finally {
      await fx.engine.stop();
    }
  });

  it('deprecatePatch replays both a history with the marker and one without it (which had already passed the point)', async () => {
    const ran: string[] = [];
    let fx = await createFixture({ workflows: [signup('patched', ran)] });
    try {
      const withMarker = await suspendUnder(fx, signup('patched', ran), 'A@X.IO');
      fx = await redeploy(fx, signup('deprecated', ran));
      const without = await suspendUnder(fx, signup('deprecated', ran), 'B@X.IO');
      assert.equal((await fx.inner.steps.load(without)).filter((s) => s.kind === 'patch').length, 0, 'deprecatePatch records nothing');
      for (const id of [withMarker, without]) await fx.engine.sendEvent(id, confirmed, { ok: false });
      assert.equal((await waitForStatus(fx.inner, withMarker, ['completed', 'failed'])).output, 'acct:a@x.io:false');
      assert.equal((await waitForStatus(fx.inner, without, ['completed', 'failed'])).output, 'acct:b@x.io:false');
      assert.deepEqual(ran, ['normalise', 'create', 'normalise', 'create']);
    } finally {
      await fx.engine.stop();
    }
  });

  it('a marker inside one branch of a fan-out, asked again in a loop, replays exactly', async () => {
    const ran: string[] = [];
    const wf = defineWorkflow('fan-patch', async (ctx) => {
      const branches = await Promise.all(
        ['a', 'b'].map(async (id) => {
          const first = await ctx.step(`fetch-${id}`, () => (ran.push(`fetch-${id}`), id));
          const answers: boolean[] = [];
          for (let i = 0; i < 2; i++) answers.push(id === 'b' && ctx.patched('b-extra'));
          if (answers[0]) await ctx.step('extra', () => (ran.push('extra'), 1));
          return `${first}:${answers.join(',')}`;
        }),
      );
      await ctx.sleep('pause', 1000);
      return branches;
    });
    const fx = await createFixture({ workflows: [wf] });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      await fx.clock.advance(1000);
      const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      assert.equal(run.status, 'completed', JSON.stringify(run.error));
      assert.deepEqual(run.output, ['a:false,false', 'b:true,true']);
      assert.deepEqual(ran.sort(), ['extra', 'fetch-a', 'fetch-b']);
      assert.equal((await fx.inner.steps.load(h.id)).filter((s) => s.kind === 'patch').length, 1);
    } finally {
      await fx.engine.stop();
    }
  });

  for (const point of ['before-checkpoint', 'after-checkpoint'] as const) {
    it(`a crash ${point} of the marker: the run resumes on one path, each body once`, async () => {
      const ran: string[] = [];
      const faults = createFaults();
      faults.crashAt({ point, stepKey: 'patch:normalise-email' });
      const wf = signup('patched', ran);
      const fx = await createFixture({ workflows: [wf], faults });
      try {
        const h = await fx.engine.startRun(wf, { email: 'C@X.IO' }).catch(() => undefined);
        const id = h?.id ?? (await fx.inner.runs.list({ workflow: 'signup' })).runs[0]?.id;
        assert.ok(id !== undefined);
        await fx.clock.advance(60_000);
        await fx.engine.recover();
        await waitForIdle(fx.inner, id);
        await fx.engine.sendEvent(id, confirmed, { ok: true });
        await fx.clock.advance(60_000);
        await fx.engine.recover();
        const run = await waitForStatus(fx.inner, id, ['completed', 'failed']);
        assert.equal(faults.crashes.length, 1, 'the crash was injected');
        assert.equal(run.status, 'completed', JSON.stringify(run.error));
        assert.equal(run.output, 'acct:c@x.io:true');
        assert.deepEqual(
          ran.filter((r) => r === 'create'),
          ['create'],
        );
        assert.equal((await fx.inner.steps.load(id)).filter((s) => s.kind === 'patch').length, 1);
      } finally {
        await fx.engine.stop();
      }
    });
  }

  it('a bad patch id is INVALID_INPUT and records nothing', async () => {
    for (const bad of ['', 'x'.repeat(501), 42 as unknown as string]) {
      const wf = defineWorkflow('bad-patch', async (ctx) => ctx.patched(bad));
      const fx = await createFixture({ workflows: [wf] });
      try {
        const h = await fx.engine.startRun(wf, null);
        const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
        assert.equal(run.status, 'failed');
        assert.equal(run.error?.code, 'INVALID_INPUT');
        assert.deepEqual(await fx.inner.steps.load(h.id), []);
      } finally {
        await fx.engine.stop();
      }
    }
  });
});
