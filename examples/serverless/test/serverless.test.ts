// The example, run for real: the app's server (node:http, and Hono) on a free port over a SQLite
// file, orders placed through its HTTP routes, pushed by a dispatcher or by ticks; every order
// completes and every step body ran once. Last, `pnpm start` itself, as the README runs it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import type { WorkflowStore } from '@cairn/core/backend';
import { createDispatcher } from '@cairn/http';
import { openSqliteStore } from '@cairn/kysely';
import { createServerlessApp, type ServerlessApp } from '../src/app.js';
import { createHonoServer } from '../src/hono-app.js';
import { createNodeServer } from '../src/node-server.js';
import { startTicker } from '../src/ticker.js';
import { bodiesRan } from '../src/workflows.js';

const SECRET = 'example-test-secret-0123456789';
const STEPS = ['reserve stock', 'charge card', 'ship'];

describe('the serverless example', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function serve(host: (app: ServerlessApp) => Server): Promise<{ store: WorkflowStore; base: string; close(): Promise<void> }> {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-example-serverless-'));
    dirs.push(dir);
    const store = await openSqliteStore(join(dir, 'app.sqlite'));
    const server = host(createServerlessApp(store, { secret: SECRET, maxDurationMs: 5000 }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return {
      store,
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async close() {
        server.closeAllConnections();
        server.close();
        await store.close();
      },
    };
  }

  /** Places three orders through the app's routes and waits until each completed; returns their ids. */
  async function placeOrders(base: string): Promise<string[]> {
    const ids: string[] = [];
    for (const orderId of ['a', 'b', 'c']) {
      const response = await fetch(`${base}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ orderId, items: 1 }),
      });
      assert.equal(response.status, 201);
      ids.push(((await response.json()) as { id: string }).id);
    }
    for (const [i, id] of ids.entries()) {
      let found: { status: string; output?: unknown } = { status: '' };
      for (let tries = 0; tries < 600 && found.status !== 'completed'; tries++) {
        found = (await (await fetch(`${base}/orders/${id}`)).json()) as typeof found;
        if (found.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const orderId = ['a', 'b', 'c'][i];
      assert.deepEqual(found, { status: 'completed', output: { orderId, reserved: 1, paymentId: `pay_${orderId}`, tracking: `trk_${orderId}` } });
      assert.deepEqual(
        bodiesRan.filter((line) => line.startsWith(`${id} `)).map((line) => line.slice(id.length + 1)),
        STEPS,
        'each step body ran once',
      );
    }
    return ids;
  }

  it('node:http, pushed by a dispatcher: every order completes, each body once', async () => {
    const app = await serve(createNodeServer);
    const dispatcher = createDispatcher({ store: app.store, target: `${app.base}/api/cairn`, secrets: SECRET, pollIntervalMs: 100 });
    await dispatcher.start();
    try {
      await placeOrders(app.base);
    } finally {
      await dispatcher.stop();
      await app.close();
    }
  });

  it('Hono, pushed by a tick: every order completes, each body once', async () => {
    const app = await serve(createHonoServer);
    const ticker = startTicker(`${app.base}/api/cairn`, SECRET, 100);
    try {
      await placeOrders(app.base);
      assert.ok(ticker.ticks >= 2, `${ticker.ticks} ticks`);
    } finally {
      await ticker.stop();
      await app.close();
    }
  });

  it('a push the example did not sign is refused by both hostings', async () => {
    for (const host of [createNodeServer, createHonoServer]) {
      const app = await serve(host);
      try {
        const response = await fetch(`${app.base}/api/cairn`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"tick"}' });
        assert.equal(response.status, 401);
      } finally {
        await app.close();
      }
    }
  });

  it('pnpm start -- --hono --tick (the README command) places three orders and exits 0', async () => {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', main, '--hono', '--tick'], {
      env: { ...process.env, CAIRN_TICK_MS: '100' },
      timeout: 60_000,
    });
    assert.match(stdout, /push handler \(Hono\) at http:\/\/127\.0\.0\.1:\d+\/api\/cairn/);
    assert.equal(stdout.match(/order \S+ completed: \{"orderId":"o-\d"/g)?.length, 3, stdout);
    assert.match(stdout, /3 orders completed \(\d+ ticks\)/);
  });
});
