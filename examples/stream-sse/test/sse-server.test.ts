import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createEngine, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { openSqliteStore } from '@cairn/kysely';
import { createSseServer, type SseServer } from '../src/sse-server.js';
import { story } from '../src/workflows.js';

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Opens the SSE endpoint; collects events until `stopAfter` of them arrived (then disconnects) or the server ends. */
function readEvents(port: number, path: string, headers: Record<string, string>, stopAfter = Infinity): Promise<{ status: number; events: SseEvent[] }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, path, headers }, (res) => {
      const events: SseEvent[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        buffer += text;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { data: '' };
          for (const line of block.split('\n')) {
            const [field, ...rest] = line.split(': ');
            const value = rest.join(': ');
            if (field === 'id') event.id = value;
            else if (field === 'event') event.event = value;
            else if (field === 'data') event.data = value;
          }
          events.push(event);
          if (events.length === stopAfter) {
            // The client goes away here, whatever else the buffer held.
            req.destroy();
            resolve({ status: res.statusCode ?? 0, events });
            return;
          }
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, events }));
    });
    req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    req.end();
  });
}

let dir = '';
let store: WorkflowStore;
let engine: Engine;
let sse: SseServer;
let port = 0;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-sse-'));
  store = await openSqliteStore(join(dir, 'sse.sqlite'), { migrate: true });
  engine = createEngine({ store, workflows: [story] });
  await engine.start();
  sse = createSseServer(engine);
  await new Promise<void>((resolve) => sse.server.listen(0, '127.0.0.1', resolve));
  port = (sse.server.address() as AddressInfo).port;
});

after(async () => {
  sse.server.close();
  await engine.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a client that disconnects and reconnects with Last-Event-ID gets every token once, in order, then the end', async () => {
  const run = await engine.startRun(story, { count: 8, pauseMs: 20 });
  const path = `/runs/${run.id}/streams/tokens`;
  const first = await readEvents(port, path, {}, 3);
  assert.equal(first.status, 200);
  assert.deepEqual(
    first.events.map((e) => e.id),
    ['0', '1', '2'],
  );
  const rest = await readEvents(port, path, { 'last-event-id': '2' });
  assert.deepEqual(
    rest.events.map((e) => e.id ?? e.event),
    ['3', '4', '5', '6', '7', 'end'],
  );
  const tokens = [...first.events, ...rest.events].filter((e) => e.id !== undefined).map((e) => (JSON.parse(e.data) as { token: string }).token);
  assert.deepEqual(
    tokens,
    Array.from({ length: 8 }, (_, i) => `word${i}`),
  );
  // The client that left holds nothing on the server.
  for (let i = 0; i < 100 && sse.openReaders() > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
  assert.equal(sse.openReaders(), 0);
  assert.deepEqual(await engine.result(run.id), { tokens: 8 });
});

test('bad requests are HTTP errors: an unknown run 404, Last-Event-ID past the end 400', async () => {
  const missing = await readEvents(port, '/runs/no-such-run/streams/tokens', {});
  assert.equal(missing.status, 404);
  const run = await engine.startRun(story, { count: 2, pauseMs: 1 });
  await engine.result(run.id);
  const past = await readEvents(port, `/runs/${run.id}/streams/tokens`, { 'last-event-id': '5' });
  assert.equal(past.status, 400);
  const never = await readEvents(port, `/runs/${run.id}/streams/other`, {});
  assert.equal(never.status, 404);
  assert.equal(sse.openReaders(), 0);
});
