// The dispatcher cases: the handler and two `cairn dispatch` processes, each a process of its own,
// over the store under test; this process only starts runs and reads them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  arrived: number;
  answered: number;
}

/** The most intervals [arrived, answered] that overlap at one instant. */
function mostAtOnce(pushes: readonly LoggedAnswer[]): number {
  const edges = pushes.flatMap((p) => [
    [p.arrived, 1],
    [p.answered, -1],
  ]);
  // An answer at the instant another push arrives ends first: the dispatcher got it before it pushed.
  edges.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let now = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (now += step as number));
  return most;
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
      (existsSync(bodies) ? readFileSync(bodies, 'utf8') : '')
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

    it('two dispatchers push every due run to the handler once: long, queued and sleeping runs complete, each body once, no push skipped, at most --limit pushes of a workflow at once', async () => {
      // The three processes start side by side (the handler's address is chosen first).
      const url = `http://127.0.0.1:${await freePort()}/api/cairn`;
      const port = new URL(url).port;
      // http-long is limited to 2 pushes at once across both dispatchers (--limit).
      const limit = ['--limit', 'http-long=2'];
      const [handler, ...dispatchers] = await Promise.all([
        startHandler({ ...env, CAIRN_HTTP_PORT: port, CAIRN_HTTP_MAX_DURATION_MS: '400', CAIRN_HTTP_RESERVE_MS: '100' }),
        startDispatcher(storeUrl, url, prefix, limit),
        startDispatcher(storeUrl, url, prefix, limit),
      ]);
      processes.push(handler, ...dispatchers);
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
      const longIds = new Set(long.map((run) => run.id));
      assert.equal(
        mostAtOnce(runPushes.filter((a) => longIds.has(a.runId ?? ''))),
        2,
        '--limit http-long=2: at most 2 of its pushes at once across the two dispatchers, and 2 reached',
      );
      await Promise.all([...dispatchers.map((d) => d.stop()), handler.stop()]);
    });

    it('the handler SIGKILLed mid-push while a dispatcher pushes: the run is pushed again once the lease passed, each step recorded once', async () => {
      // The handler comes back on the same address, as a platform's function does.
      const port = await freePort();
      const handlerEnv = { ...env, CAIRN_HTTP_PORT: String(port), CAIRN_HTTP_LEASE_MS: '1500', CAIRN_HTTP_MAX_DURATION_MS: '20000' };
      const [first, dispatcher] = await Promise.all([startHandler(handlerEnv), startDispatcher(storeUrl, `http://127.0.0.1:${port}/api/cairn`, prefix)]);
      processes.push(first, dispatcher);
      const run = await engine.startRun(longRun, { n: 5, ms: 250 });
      for (let i = 0; i < 1000 && !ran(run.id).includes('s2'); i++) await sleep(10);
      assert.ok(ran(run.id).includes('s2'), 'the dispatched push reached its third step');
      await first.kill();
      const second = await startHandler(handlerEnv);
      processes.push(second);
      assert.equal(await engine.result(run.id, { timeout: '60s' }), 10);
      assert.deepEqual(
        (await engine.steps(run.id)).map((s) => [s.key, s.status, s.attempt]),
        ['s0', 's1', 's2', 's3', 's4'].map((key) => [key, 'succeeded', 1]),
      );
      // Only the body running at the kill may have run twice (as after any crash).
      const bodiesRan = ran(run.id);
      const twice = bodiesRan.filter((key, i) => bodiesRan.indexOf(key) !== i);
      assert.deepEqual([...new Set(bodiesRan)].sort(), ['s0', 's1', 's2', 's3', 's4'], bodiesRan.join(','));
      assert.ok(twice.length <= 1 && twice.every((key) => key === 's2' || key === 's3'), `bodies: ${bodiesRan.join(',')}`);
      await Promise.all([dispatcher.stop(), second.stop()]);
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
