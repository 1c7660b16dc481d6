// Every kind of bad push is refused before the store is touched (counted: zero store calls), over
// a real node:http server in this process; a good push, signed with either of two secrets
// (rotation), runs. Signatures are checked in constant time and against every secret.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { countingStore } from '@cairn/core/backend';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, createHttpHandler, signPush, toNodeListener, verifyPush } from '@cairn/http';

const SECRET = 'current-secret-0123456789';
const OLD = 'previous-secret-0123456789';
const wf = defineWorkflow('http-security', async (ctx) => ctx.step('only', () => 42));

describe('push handler security', () => {
  const store = countingStore(createMemoryStore());
  const engine = createEngine({ store, workflows: [wf] });
  let server: Server;
  let url = '';
  before(async () => {
    server = createServer(toNodeListener(createHttpHandler(engine, { secrets: [SECRET, OLD], maxDurationMs: 5000, maxBodyBytes: 1024 })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = async (body: string, headers: Record<string, string>, method = 'POST') => {
    const response = await fetch(url, { method, headers, ...(method === 'GET' ? {} : { body }) });
    return { status: response.status, body: (await response.json()) as { error?: string; status?: string } };
  };
  const json = { 'content-type': 'application/json' };

  it('refuses each bad push with its status, touching nothing in the store', async () => {
    const run = await engine.startRun(wf, null);
    const body = JSON.stringify({ kind: 'run', runId: run.id });
    const now = Date.now();
    const cases: [string, () => Promise<{ status: number; body: { error?: string } }>, number, string?][] = [
      ['no signature', () => post(body, json), 401, 'missing-signature'],
      ['no timestamp', () => post(body, { ...json, [SIGNATURE_HEADER]: signPush(body, SECRET)[SIGNATURE_HEADER] as string }), 401, 'missing-signature'],
      ['a wrong secret', () => post(body, { ...json, ...signPush(body, 'some-other-secret-0123456789') }), 401, 'bad-signature'],
      ['a signature of another length', () => post(body, { ...json, [TIMESTAMP_HEADER]: String(now), [SIGNATURE_HEADER]: 'v1=abcd' }), 401, 'bad-signature'],
      ['another scheme', () => post(body, { ...json, [TIMESTAMP_HEADER]: String(now), [SIGNATURE_HEADER]: `v0=${'0'.repeat(64)}` }), 401, 'bad-signature'],
      ['a body changed in flight', () => post(body.replace(run.id, `${run.id.slice(0, -1)}0`), { ...json, ...signPush(body, SECRET) }), 401, 'bad-signature'],
      ['a timestamp changed in flight', () => post(body, { ...json, ...signPush(body, SECRET), [TIMESTAMP_HEADER]: String(now + 1) }), 401, 'bad-signature'],
      ['a timestamp ten minutes old (a replay)', () => post(body, { ...json, ...signPush(body, SECRET, now - 600_000) }), 401, 'stale-timestamp'],
      ['a timestamp ten minutes ahead', () => post(body, { ...json, ...signPush(body, SECRET, now + 600_000) }), 401, 'stale-timestamp'],
      [
        'a timestamp that is no number',
        () => post(body, { ...json, [TIMESTAMP_HEADER]: 'soon', [SIGNATURE_HEADER]: `v1=${'0'.repeat(64)}` }),
        401,
        'bad-timestamp',
      ],
      ['a text body', () => post(body, { 'content-type': 'text/plain', ...signPush(body, SECRET) }), 415],
      ['a form body', () => post(body, { 'content-type': 'application/x-www-form-urlencoded', ...signPush(body, SECRET) }), 415],
      ['a GET', () => post('', { ...json }, 'GET'), 405],
      [
        'a body over the limit (signed)',
        () =>
          post(JSON.stringify({ kind: 'run', runId: run.id, pad: 'x'.repeat(2000) }), {
            ...json,
            ...signPush(JSON.stringify({ kind: 'run', runId: run.id, pad: 'x'.repeat(2000) }), SECRET),
          }),
        413,
      ],
      [
        'signed JSON that names no unit',
        () => post('{"kind":"start","workflow":"http-security"}', { ...json, ...signPush('{"kind":"start","workflow":"http-security"}', SECRET) }),
        400,
      ],
      ['signed text that is no JSON', () => post('run it', { ...json, ...signPush('run it', SECRET) }), 400],
      ['a signed run id that is no identifier', () => post('{"kind":"run","runId":""}', { ...json, ...signPush('{"kind":"run","runId":""}', SECRET) }), 400],
    ];
    for (const [what, send, status, error] of cases) {
      store.reset();
      const answer = await send();
      assert.equal(answer.status, status, what);
      if (error !== undefined) assert.equal(answer.body.error, error, what);
      assert.deepEqual(store.counts(), {}, `${what}: the store was touched`);
    }
    assert.equal((await engine.getRun(run.id))?.status, 'pending');
  });

  it('refuses a body streamed past the limit without a length, after reading at most the limit', async () => {
    store.reset();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { ...json, ...signPush('x', SECRET) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      // Chunked, no content-length: 64 KiB in 1 KiB writes.
      for (let i = 0; i < 64; i++) req.write('x'.repeat(1024));
      req.end();
    });
    assert.equal(status, 413);
    assert.deepEqual(store.counts(), {});
  });

  it('runs a push signed with either secret of a rotation, or with both', async () => {
    for (const secrets of [[SECRET], [OLD], [OLD, SECRET]]) {
      const run = await engine.startRun(wf, null);
      const body = JSON.stringify({ kind: 'run', runId: run.id });
      const answer = await post(body, { ...json, ...signPush(body, secrets) });
      assert.equal(answer.status, 200, secrets.join('+'));
      assert.equal(answer.body.status, 'completed');
      assert.equal(await engine.result(run.id), 42);
    }
  });

  it('verifyPush: every secret and signature is compared, and only an exact HMAC passes (generated)', () => {
    // A seeded generator of bodies, timestamps and single-byte flips; the seed is printed on failure.
    const seed = Number(process.env.CAIRN_HTTP_SEED ?? Date.now() % 100_000);
    let state = seed;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state;
    };
    for (let i = 0; i < 300; i++) {
      const body = new TextEncoder().encode(JSON.stringify({ kind: 'run', runId: `r${next()}`, n: next() }));
      const now = 1_700_000_000_000 + next();
      const headers = new Headers(signPush(body, [OLD, SECRET], now));
      assert.equal(verifyPush(headers, body, [SECRET], 1000, now), undefined, `seed ${seed}`);
      const flipped = body.slice();
      const at = next() % flipped.length;
      flipped[at] = (flipped[at] as number) ^ (1 << (next() % 8));
      assert.equal(verifyPush(headers, flipped, [SECRET, OLD], 1000, now), 'bad-signature', `seed ${seed}: byte ${at} flipped`);
      assert.equal(verifyPush(headers, body, ['unrelated-secret-0123456'], 1000, now), 'bad-signature', `seed ${seed}`);
    }
  });

  it('createHttpHandler refuses options that would accept forgeries or refuse everything', () => {
    for (const bad of [
      { secrets: [], maxDurationMs: 1000 },
      { secrets: 'short', maxDurationMs: 1000 },
      { secrets: SECRET, maxDurationMs: 0 },
      { secrets: SECRET, maxDurationMs: 1000, reserveMs: 1000 },
      { secrets: SECRET } as { secrets: string; maxDurationMs: number },
    ])
      assert.throws(() => createHttpHandler(engine, bad), TypeError, JSON.stringify(bad));
  });
});
