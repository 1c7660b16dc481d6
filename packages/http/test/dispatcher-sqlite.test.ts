// The dispatcher in this process over a SQLite file, pushing to a real node:http server hosting the
// handler (also in this process, over the same file): how often it writes to the store while
// another dispatcher holds a run, and per-workflow limits counted at the handler.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '@cairn/core';
import { countingStore, type WorkflowStore } from '@cairn/core/backend';
import { createDispatcher, createHttpHandler, toNodeListener } from '@cairn/http';
import { openSqliteStore } from '@cairn/kysely';
import { longRun, queuedRun, workflows } from './fixtures/workflows.js';
import { SECRET } from './support/handler-process.js';
import { inFlightCounter } from './support/in-flight-counter.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the dispatcher over SQLite, in process', () => {
  let dir = '';
  let store: WorkflowStore;
  let server: Server;
  let url = '';
  const counter = inFlightCounter();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-dispatcher-'));
    store = await openSqliteStore(join(dir, 'cairn.sqlite'));
    const engine = createEngine({ store, workflows, logger: { warn: () => {}, error: () => {} } });
    const handler = counter.wrap(createHttpHandler(engine, { secrets: SECRET, maxDurationMs: 400, reserveMs: 100 }));
    server = createServer(toNodeListener(handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/cairn`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a due run that another dispatcher holds is tried once per poll, not in a loop of writes', async () => {
    const engine = createEngine({ store, workflows });
    const run = await engine.startRun(longRun, { n: 1, ms: 1 });
    // Another dispatcher holds the run (as while it pushes it): this one must leave it alone.
    const key = `d:run:${run.id}`;
    assert.equal((await store.slots?.acquire({ key, limit: 1, holder: 'other', expiresAt: Date.now() + 60_000 }, Date.now()))?.acquired, true);
    const counted = countingStore(store, { history: false });
    const dispatcher = createDispatcher({ store: counted, target: url, secrets: SECRET, pollIntervalMs: 100 });
    const started = Date.now();
    await dispatcher.start();
    await sleep(500);
    await dispatcher.stop();
    const polls = Math.ceil((Date.now() - started) / 100) + 1;
    const acquires = counted.counts()['slots.acquire'] ?? 0;
    assert.ok(acquires >= 1, 'the run was tried');
    assert.ok(acquires <= polls, `slots.acquire ${acquires} times in ${Date.now() - started} ms (${polls} polls)`);
    assert.equal(dispatcher.pushes, 0);
    await store.slots?.release(key, 'other', Date.now());
  });

  it('--limit: two dispatchers push at most N runs of a workflow at once, other workflows unlimited', async () => {
    const engine = createEngine({ store, workflows });
    counter.reset();
    const long = await Promise.all(Array.from({ length: 6 }, () => engine.startRun(longRun, { n: 4, ms: 40 })));
    const queued = await Promise.all(Array.from({ length: 3 }, () => engine.startRun(queuedRun, null)));
    for (const run of long) counter.name(run.id, 'http-long');
    for (const run of queued) counter.name(run.id, 'http-queued');
    const options = { store, target: url, secrets: SECRET, pollIntervalMs: 100, workflowLimits: { 'http-long': 2 } };
    const dispatchers = [createDispatcher(options), createDispatcher(options)];
    await Promise.all(dispatchers.map((d) => d.start()));
    assert.deepEqual(await Promise.all(long.map((run) => engine.result(run.id, { timeout: '60s' }))), [6, 6, 6, 6, 6, 6]);
    assert.deepEqual(await Promise.all(queued.map((run) => engine.result(run.id, { timeout: '60s' }))), [11, 11, 11]);
    await Promise.all(dispatchers.map((d) => d.stop()));
    assert.equal(counter.max('http-long'), 2, 'at most 2 pushes of http-long at once, and the limit was reached');
    assert.ok(counter.max('http-queued') >= 2, `http-queued is not limited: ${counter.max('http-queued')} at once`);
  });
});
