// `pnpm --filter @cairn/example-serverless start [-- --hono] [-- --tick]`: the app on a SQLite
// file, its push handler on plain node:http (or in Hono with --hono), pushed to by a dispatcher
// (or by a tick every second with --tick, as a platform's cron would every minute). It places three
// orders through the app's own HTTP routes, waits until each completed, prints them and exits.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatcher } from '@cairn/http';
import { openSqliteStore } from '@cairn/kysely';
import { createServerlessApp } from './app.js';
import { createHonoServer } from './hono-app.js';
import { createNodeServer } from './node-server.js';
import { startTicker } from './ticker.js';

const args = process.argv.slice(2);
const hono = args.includes('--hono');
const tick = args.includes('--tick');
const file = process.env.CAIRN_SQLITE ?? join(mkdtempSync(join(tmpdir(), 'cairn-serverless-')), 'serverless.sqlite');
const secret = process.env.CAIRN_SECRET ?? randomBytes(32).toString('hex');

const store = await openSqliteStore(file);
const app = createServerlessApp(store, { secret, maxDurationMs: 5000 });
const server = hono ? createHonoServer(app) : createNodeServer(app);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
await once(server, 'listening');
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const target = `${base}/api/cairn`;
console.log(`push handler (${hono ? 'Hono' : 'node:http'}) at ${target}`);

// The pusher. A dispatcher here runs in this process for the demo; in production it is its own
// long-lived process: CAIRN_SECRET=... pnpm cairn dispatch --url sqlite:<file> --target <url> --secret-env CAIRN_SECRET
const dispatcher = tick ? undefined : createDispatcher({ store, target, secrets: secret, pollIntervalMs: 500 });
await dispatcher?.start();
const ticker = tick ? startTicker(target, secret, Number(process.env.CAIRN_TICK_MS ?? 1000)) : undefined;
console.log(
  tick
    ? 'pushed by a tick every second (a cron stand-in)'
    : `pushed by a dispatcher (as: pnpm cairn dispatch --url sqlite:${file} --target ${target} --secret-env CAIRN_SECRET)`,
);

const ids: string[] = [];
for (const orderId of ['o-1', 'o-2', 'o-3']) {
  const response = await fetch(`${base}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId, items: 2 }),
  });
  ids.push(((await response.json()) as { id: string }).id);
}
const deadline = Date.now() + 60_000;
for (const id of ids) {
  for (;;) {
    const found = (await (await fetch(`${base}/orders/${id}`)).json()) as { status: string; output?: unknown };
    if (found.status === 'completed') {
      console.log(`order ${id} completed: ${JSON.stringify(found.output)}`);
      break;
    }
    if (found.status === 'failed' || Date.now() > deadline) throw new Error(`order ${id}: ${found.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
console.log(`3 orders completed (${dispatcher ? `${dispatcher.pushes} pushes` : `${ticker?.ticks} ticks`}); SQLite file: ${file}`);
await dispatcher?.stop();
await ticker?.stop();
server.close();
await store.close();
