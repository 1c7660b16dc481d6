// The push cases every backend runs: a real node:http server hosting the handler in a process of
// its own, pushed to with fetch from this process, over the store under test.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { longRun, queuedRun, sleepyRun, workflows } from '../fixtures/workflows.js';
import { openStore } from '../fixtures/open-store.js';
import { type HandlerProcess, push, pushUntilDone, startHandler } from './handler-process.js';

/** Where the cases run: a store URL (and a Redis key prefix) made for them, dropped after. */
export interface PushTarget {
  name: string;
  skip?: string;
  setup(): Promise<{ url: string; redisPrefix?: string }>;
  teardown(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function pushedCases(target: PushTarget): void {
  describe(`push handler over ${target.name}`, { ...(target.skip === undefined ? {} : { skip: target.skip }) }, () => {
    let dir = '';
    let bodies = '';
    let env: Record<string, string> = {};
    let store: WorkflowStore;
    let engine: Engine;
    const handlers: HandlerProcess[] = [];
    const handler = async (extra: Record<string, string> = {}) => {
      const started = await startHandler({ ...env, ...extra });
      handlers.push(started);
      return started;
    };
    /** The step bodies that ran for `runId`, in order, across every handler process. */
    const ran = (runId: string) =>
      readFileSync(bodies, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${runId} `))
        .map((line) => line.slice(runId.length + 1));

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cairn-http-'));
      bodies = join(dir, 'bodies.log');
      const { url, redisPrefix } = await target.setup();
      env = { CAIRN_HTTP_STORE_URL: url, CAIRN_HTTP_BODIES: bodies, ...(redisPrefix === undefined ? {} : { CAIRN_HTTP_REDIS_PREFIX: redisPrefix }) };
      process.env.CAIRN_HTTP_BODIES = bodies;
      store = await openStore(url, redisPrefix);
      // The application's side: starts runs and reads them; never started, it runs nothing.
      engine = createEngine({ store, workflows });
    });
    after(async () => {
      await Promise.all(handlers.map((h) => h.stop()));
      await store?.close();
      await target.teardown();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a long run completes over many short pushes, each step body run once', async () => {
      const h = await handler({ CAIRN_HTTP_MAX_DURATION_MS: '300', CAIRN_HTTP_RESERVE_MS: '100' });
      const run = await engine.startRun(longRun, { n: 30, ms: 20 });
      const answers = await pushUntilDone(h.url, { kind: 'run', runId: run.id });
      assert.equal(answers.at(-1)?.status, 'completed');
      assert.ok(answers.length >= 3, `30 steps of 20 ms over pushes of 200 ms: ${answers.length} pushes`);
      assert.ok(answers.slice(0, -1).every((a) => a.status === 'continue'));
      assert.deepEqual(
        ran(run.id),
        Array.from({ length: 30 }, (_, i) => `s${i}`),
      );
      assert.equal(await engine.result(run.id), 435);
      assert.deepEqual(
        (await engine.steps(run.id)).map((s) => [s.key, s.status, s.attempt]),
        Array.from({ length: 30 }, (_, i) => [`s${i}`, 'succeeded', 1]),
      );
    });

    it('the same push delivered four times at once executes the run once; a late duplicate claims nothing', async () => {
      const h = await handler();
      const run = await engine.startRun(longRun, { n: 5, ms: 60 });
      const answers = await Promise.all(Array.from({ length: 4 }, () => push(h.url, { kind: 'run', runId: run.id })));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200],
      );
      assert.deepEqual(answers.map((a) => a.answer.status).sort(), ['completed', 'skipped', 'skipped', 'skipped']);
      assert.equal((await push(h.url, { kind: 'run', runId: run.id })).answer.status, 'skipped');
      assert.deepEqual(ran(run.id), ['s0', 's1', 's2', 's3', 's4']);
      assert.equal(await engine.result(run.id), 10);
    });

    it('a handler SIGKILLed mid-push: the run is picked up by the next push after the lease, nothing recorded twice', async () => {
      const first = await handler({ CAIRN_HTTP_LEASE_MS: '1500', CAIRN_HTTP_MAX_DURATION_MS: '20000' });
      const run = await engine.startRun(longRun, { n: 5, ms: 250 });
      const inFlight = push(first.url, { kind: 'run', runId: run.id }).catch((error: unknown) => error);
      for (let i = 0; i < 400 && !ran(run.id).includes('s2'); i++) await sleep(10);
      assert.ok(ran(run.id).includes('s2'), 'the push reached its third step');
      await first.kill();
      assert.ok((await inFlight) instanceof Error, 'the killed push got no answer');
      assert.equal((await engine.getRun(run.id))?.status, 'running', 'the dead handler still holds the lease');
      const second = await handler({ CAIRN_HTTP_LEASE_MS: '1500', CAIRN_HTTP_MAX_DURATION_MS: '20000' });
      let last = '';
      for (let i = 0; i < 100 && last !== 'completed'; i++) {
        last = (await push(second.url, { kind: 'run', runId: run.id })).answer.status;
        if (last === 'skipped') await sleep(100);
      }
      assert.equal(last, 'completed');
      assert.equal(await engine.result(run.id), 10);
      assert.deepEqual(
        (await engine.steps(run.id)).map((s) => [s.key, s.status]),
        ['s0', 's1', 's2', 's3', 's4'].map((key) => [key, 'succeeded']),
      );
      // Only the body in flight at the kill may have run twice (as after any crash).
      const bodiesRan = ran(run.id);
      for (const key of ['s0', 's1', 's2', 's3', 's4']) assert.ok(bodiesRan.includes(key), key);
      assert.ok(bodiesRan.length <= 6, `bodies: ${bodiesRan.join(',')}`);
      assert.ok(new Set(bodiesRan.filter((k, i) => bodiesRan.indexOf(k) !== i)).size <= 1);
    });

    it('a push over its budget: the running body finishes and is recorded, no new step starts, and the next push goes on', async () => {
      const h = await handler({ CAIRN_HTTP_MAX_DURATION_MS: '700', CAIRN_HTTP_RESERVE_MS: '100' });
      const run = await engine.startRun(longRun, { n: 2, ms: 1200 });
      const first = await push(h.url, { kind: 'run', runId: run.id });
      assert.equal(first.answer.status, 'continue');
      assert.deepEqual(first.answer.next, [{ kind: 'run', runId: run.id }]);
      assert.deepEqual(ran(run.id), ['s0']);
      assert.deepEqual(
        (await engine.steps(run.id)).map((s) => s.key),
        ['s0'],
      );
      await pushUntilDone(h.url, { kind: 'run', runId: run.id });
      assert.deepEqual(ran(run.id), ['s0', 's1']);
      assert.equal(await engine.result(run.id), 1);
    });

    it('a queued step is handed back as the next push, runs once, and wakes its run', async () => {
      const h = await handler();
      const run = await engine.startRun(queuedRun, null);
      const answers = await pushUntilDone(h.url, { kind: 'run', runId: run.id });
      assert.deepEqual(
        answers.map((a) => `${a.kind}:${a.status}`),
        ['run:waiting', 'step:done', 'run:completed'],
      );
      assert.deepEqual(ran(run.id), ['a', 'q']);
      assert.equal(await engine.result(run.id), 11);
    });

    it('a sleeping run answers waiting with its wake time; an early push replays nothing new', async () => {
      const h = await handler();
      const run = await engine.startRun(sleepyRun, null);
      const first = await push(h.url, { kind: 'run', runId: run.id });
      assert.equal(first.answer.status, 'waiting');
      assert.ok(typeof first.answer.wakeAt === 'number' && first.answer.wakeAt > Date.now() - 50);
      assert.equal((await push(h.url, { kind: 'run', runId: run.id })).answer.status, 'waiting');
      await sleep(Math.max(0, (first.answer.wakeAt as number) - Date.now()) + 20);
      assert.equal((await push(h.url, { kind: 'run', runId: run.id })).answer.status, 'completed');
      assert.deepEqual(ran(run.id), ['before', 'after']);
    });

    it('a tick runs every due run within its budget, and answers idle once nothing is due', async () => {
      const h = await handler({ CAIRN_HTTP_MAX_DURATION_MS: '400', CAIRN_HTTP_RESERVE_MS: '100' });
      const runs = await Promise.all([1, 2, 3].map(() => engine.startRun(longRun, { n: 4, ms: 30 })));
      let ticks = 0;
      for (let status = ''; status !== 'idle' && ticks < 50; ticks++) status = (await push(h.url, { kind: 'tick' })).answer.status;
      assert.ok(ticks < 50);
      for (const run of runs) {
        assert.equal(await engine.result(run.id), 6);
        assert.deepEqual(ran(run.id), ['s0', 's1', 's2', 's3']);
      }
    });
  });
}
