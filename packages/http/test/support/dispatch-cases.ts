// The dispatcher cases: the handler and two `cairn dispatch` processes, each a process of its own,
// over the store under test; this process only starts runs and reads them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { longRun, queuedRun, sleepyRun, workflows } from '../fixtures/workflows.js';
import { openStore } from '../fixtures/open-store.js';
import { type DispatcherProcess, startDispatcher } from './dispatcher-process.js';
import { type HandlerProcess, startHandler } from './handler-process.js';
import type { PushTarget } from './pushed-cases.js';

interface LoggedAnswer {
  http: number;
  kind: string;
  runId?: string;
  status: string;
}

export function dispatchCases(target: PushTarget): void {
  describe(`cairn dispatch over ${target.name}`, { ...(target.skip === undefined ? {} : { skip: target.skip }) }, () => {
    let dir = '';
    let bodies = '';
    let pushLog = '';
    let storeUrl = '';
    let prefix: string | undefined;
    let env: Record<string, string> = {};
    let store: WorkflowStore;
    let engine: Engine;
    const processes: (HandlerProcess | DispatcherProcess)[] = [];
    const ran = (runId: string) =>
      readFileSync(bodies, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${runId} `))
        .map((line) => line.slice(runId.length + 1));
    const answers = (): LoggedAnswer[] =>
      existsSync(pushLog)
        ? readFileSync(pushLog, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as LoggedAnswer)
        : [];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cairn-dispatch-'));
      bodies = join(dir, 'bodies.log');
      pushLog = join(dir, 'pushes.log');
      const setup = await target.setup();
      storeUrl = setup.url;
      prefix = setup.redisPrefix;
      env = {
        CAIRN_HTTP_STORE_URL: storeUrl,
        CAIRN_HTTP_BODIES: bodies,
        CAIRN_HTTP_PUSH_LOG: pushLog,
        ...(prefix === undefined ? {} : { CAIRN_HTTP_REDIS_PREFIX: prefix }),
      };
      process.env.CAIRN_HTTP_BODIES = bodies;
      store = await openStore(storeUrl, prefix);
      engine = createEngine({ store, workflows });
    });
    after(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await store?.close();
      await target.teardown();
      rmSync(dir, { recursive: true, force: true });
    });

    it('two dispatchers push every due run to the handler once: long, queued and sleeping runs complete, each body once, no push skipped', async () => {
      const handler = await startHandler({ ...env, CAIRN_HTTP_MAX_DURATION_MS: '400', CAIRN_HTTP_RESERVE_MS: '100' });
      processes.push(handler);
      const dispatchers = [await startDispatcher(storeUrl, handler.url, prefix), await startDispatcher(storeUrl, handler.url, prefix)];
      processes.push(...dispatchers);
      const long = await Promise.all([1, 2, 3, 4].map(() => engine.startRun(longRun, { n: 12, ms: 25 })));
      const queued = await engine.startRun(queuedRun, null);
      const sleepy = await engine.startRun(sleepyRun, null);
      for (const run of long) assert.equal(await engine.result(run.id, { timeout: '60s' }), 66);
      assert.equal(await engine.result(queued.id, { timeout: '60s' }), 11);
      assert.equal(await engine.result(sleepy.id, { timeout: '60s' }), 'rested');
      for (const run of long)
        assert.deepEqual(
          ran(run.id),
          Array.from({ length: 12 }, (_, i) => `s${i}`),
        );
      assert.deepEqual(ran(queued.id), ['a', 'q']);
      assert.deepEqual(ran(sleepy.id), ['before', 'after']);
      const runPushes = answers().filter((a) => a.kind === 'run');
      assert.ok(
        runPushes.some((a) => a.status === 'continue'),
        'a run of 300 ms of steps was split over pushes of 300 ms',
      );
      assert.deepEqual(
        runPushes.filter((a) => a.status === 'skipped' || a.http !== 200),
        [],
        'no run was pushed while another push held it',
      );
      await Promise.all([...dispatchers.map((d) => d.stop()), handler.stop()]);
    });
  });
}
