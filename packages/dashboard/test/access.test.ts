// Who may use the dashboard, checked over HTTP against a real engine (memory store): the bind
// rules, the token on every request (header or the cookie set from ?token=), the CSRF defence of
// actions, the Host check against DNS rebinding, the security headers, and bad filters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { CairnError, createEngine, createMemoryStore, defineWorkflow, type Engine } from '@cairn/core';
import { startDashboard, CONTENT_SECURITY_POLICY, type Dashboard } from '@cairn/dashboard';

const TOKEN = 'a3f1c9e07b5d42e8a9c0f1e2d3b4a596';
const waiter = defineWorkflow('waiter', async (ctx) => ctx.waitForEvent('go'));

/** A raw request, so the test can set Host and read Set-Cookie as they are. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const action = { 'x-cairn-dashboard': '1', 'content-type': 'application/json' };

async function rejects(options: Parameters<typeof startDashboard>[0], pattern: RegExp): Promise<void> {
  await assert.rejects(startDashboard(options), (error: unknown) => CairnError.is(error, 'INVALID_INPUT') && pattern.test((error as Error).message));
}

describe('dashboard access', () => {
  let engine: Engine;
  before(async () => {
    engine = createEngine({ store: createMemoryStore(), workflows: [waiter], logger: { warn: () => {}, error: () => {} } });
    await engine.start();
  });
  after(() => engine.stop());

  const waitingRun = async () => {
    const { id } = await engine.startRun(waiter, null, { mode: 'inline' });
    return id;
  };

  test('a non-loopback host is refused without allowRemote and a token; bad options are INVALID_INPUT', async () => {
    await rejects({ engine, host: '0.0.0.0' }, /allowRemote/);
    await rejects({ engine, host: '0.0.0.0', token: TOKEN }, /allowRemote/);
    await rejects({ engine, host: '0.0.0.0', allowRemote: true }, /token is required/);
    await rejects({ engine, host: '0.0.0.0', allowRemote: true, token: 'short' }, /at least 16/);
    await rejects({ engine, port: 70_000 }, /port/);
    await rejects({ engine, token: 'has space' }, /token/);
    await rejects({ engine, allowRemote: 'yes' } as never, /allowRemote/);
    await rejects({ engine, colour: 'blue' } as never, /unknown option "colour"/);
    await rejects({ engine: {} } as never, /engine/);
  });

  test('bound remotely with allowRemote and a token, every request needs the token', async () => {
    const dashboard = await startDashboard({ engine, host: '0.0.0.0', allowRemote: true, token: TOKEN });
    try {
      const base = new URL(dashboard.url);
      assert.equal(base.searchParams.get('token'), TOKEN);
      const at = (path: string) => `http://127.0.0.1:${base.port}${path}`;
      for (const path of ['/', '/runs/x', '/assets/runs.js', '/api/runs', '/api/runs/x']) {
        assert.equal((await raw(at(path))).status, 401, `${path} without a token`);
        assert.equal((await raw(at(path), { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401, `${path} with a wrong token`);
        assert.notEqual((await raw(at(path), { headers: { authorization: `Bearer ${TOKEN}` } })).status, 401, `${path} with the token`);
      }
      // ?token= is exchanged for an HttpOnly, SameSite=Strict cookie and dropped from the address.
      const opened = await raw(at(`/?status=failed&token=${TOKEN}`));
      assert.equal(opened.status, 303);
      assert.equal(opened.headers['location'], '/?status=failed');
      const cookie = String(opened.headers['set-cookie']).split(';')[0] as string;
      assert.match(String(opened.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
      assert.equal((await raw(at('/api/runs'), { headers: { cookie } })).status, 200);
      assert.equal((await raw(at('/?token=nope'))).status, 401);

      const id = await waitingRun();
      const cancel = at(`/api/runs/${id}/cancel`);
      assert.equal((await raw(cancel, { method: 'POST', headers: action, body: '{}' })).status, 401, 'an action without the token');
      assert.equal((await raw(cancel, { method: 'POST', headers: { ...action, authorization: 'Bearer wrong-token-wrong-token' }, body: '{}' })).status, 401);
      assert.equal((await engine.getRun(id))?.cancelRequested, false, 'refused actions change nothing');
      const done = await raw(cancel, { method: 'POST', headers: { ...action, cookie }, body: JSON.stringify({ reason: 'from the dashboard' }) });
      assert.equal(done.status, 200, done.body);
      assert.equal((await engine.getRun(id))?.cancelReason, 'from the dashboard');
    } finally {
      await dashboard.close();
    }
  });

  describe('on the default loopback bind', () => {
    let dashboard: Dashboard;
    let base: URL;
    before(async () => {
      dashboard = await startDashboard({ engine });
      base = new URL(dashboard.url);
    });
    after(() => dashboard.close());
    const at = (path: string) => new URL(path, base).href;

    test('listens on 127.0.0.1 and answers only requests addressed to it (DNS rebinding)', async () => {
      assert.equal(base.hostname, '127.0.0.1');
      assert.equal(base.search, '');
      assert.equal((await raw(at('/api/runs'))).status, 200);
      assert.equal((await raw(at('/api/runs'), { headers: { host: `localhost:${base.port}` } })).status, 200);
      const rebound = await raw(at('/api/runs'), { headers: { host: `attacker.example:${base.port}` } });
      assert.equal(rebound.status, 421);
    });

    test('actions are POSTs with the custom header, a JSON body and this origin; refused ones change nothing', async () => {
      const id = await waitingRun();
      const cancel = at(`/api/runs/${id}/cancel`);
      const refused = [
        await raw(cancel, { method: 'GET' }),
        await raw(cancel, { method: 'PUT', headers: action, body: '{}' }),
        await raw(cancel, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
        // What a cross-site HTML form can send.
        await raw(cancel, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'reason=x' }),
        await raw(cancel, { method: 'POST', headers: { ...action, 'content-type': 'text/plain' }, body: '{}' }),
        await raw(cancel, { method: 'POST', headers: { ...action, origin: 'https://evil.example' }, body: '{}' }),
        await raw(cancel, { method: 'POST', headers: { ...action, 'sec-fetch-site': 'cross-site' }, body: '{}' }),
      ];
      assert.deepEqual(
        refused.map((r) => r.status),
        [404, 405, 403, 403, 415, 403, 403],
      );
      assert.equal((await engine.getRun(id))?.cancelRequested, false);
      const ok = await raw(cancel, { method: 'POST', headers: { ...action, origin: `http://${base.host}`, 'sec-fetch-site': 'same-origin' }, body: '{}' });
      assert.equal(ok.status, 200, ok.body);
      assert.equal((await engine.getRun(id))?.cancelRequested, true);
      const missing = await raw(at('/api/runs/no-such-run/cancel'), { method: 'POST', headers: action, body: '{}' });
      assert.equal(missing.status, 404);
      assert.equal(JSON.parse(missing.body).error.code, 'RUN_NOT_FOUND');
      // The engine's refusals come back with their codes, and change nothing.
      const live = await waitingRun();
      const retry = await raw(at(`/api/runs/${live}/retry`), { method: 'POST', headers: action, body: '{}' });
      assert.deepEqual([retry.status, JSON.parse(retry.body).error.code], [409, 'RUN_CONFLICT']);
      const fork = await raw(at(`/api/runs/${live}/fork`), { method: 'POST', headers: action, body: JSON.stringify({ fromStep: 'no-such-step' }) });
      assert.deepEqual([fork.status, JSON.parse(fork.body).error.code], [404, 'STEP_NOT_FOUND']);
      const noStep = await raw(at(`/api/runs/${live}/fork`), { method: 'POST', headers: action, body: '{}' });
      assert.deepEqual([noStep.status, JSON.parse(noStep.body).error.code], [400, 'INVALID_INPUT']);
      assert.equal((await engine.listRuns()).runs.length, 3, 'no run was forked');
      assert.equal((await engine.getRun(live))?.status, 'waiting');
    });

    test('every answer carries the strict CSP; the pages have no inline script, style or handler', async () => {
      for (const path of ['/', '/runs/x', '/assets/run.js', '/api/runs', '/nope']) {
        const answer = await raw(at(path));
        assert.equal(answer.headers['content-security-policy'], CONTENT_SECURITY_POLICY, path);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff');
      }
      assert.match(CONTENT_SECURITY_POLICY, /script-src 'self';/);
      assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe/);
      const dir = new URL('../public/', import.meta.url);
      for (const name of readdirSync(dir)) {
        const text = readFileSync(new URL(name, dir), 'utf8');
        if (name.endsWith('.html')) {
          assert.doesNotMatch(text, /<script(?![^>]*\bsrc=)[^>]*>/, `${name}: inline <script>`);
          assert.doesNotMatch(text, /\sstyle=|\son[a-z]+=/i, `${name}: inline style or handler`);
        }
        if (name.endsWith('.js'))
          assert.doesNotMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, `${name} parses HTML or code`);
      }
    });

    test('bad filters are INVALID_INPUT (400); a missing run is 404', async () => {
      for (const query of ['createdAfter=yesterday', 'limit=ten', 'colour=blue', 'status=sleeping', 'limit=0']) {
        const answer = await raw(at(`/api/runs?${query}`));
        assert.equal(answer.status, 400, query);
        assert.equal(JSON.parse(answer.body).error.code, 'INVALID_INPUT', query);
      }
      assert.equal((await raw(at('/api/runs/no-such-run'))).status, 404);
      assert.equal((await raw(at('/api/runs/%E0%A4%A'))).status, 400);
    });
  });
});
