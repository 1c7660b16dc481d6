/**
 * Nothing may be left running after the tests, even when they fail or are interrupted. A child
 * test process starts local servers through the shared provider and then ends in each way a test
 * run can end; afterwards every server PID must be gone and every temp dir removed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const servicesEntry = fileURLToPath(new URL('../src/services/index.ts', import.meta.url));

interface Started {
  name: string;
  pid: number;
  dir: string;
}

type Ending = 'exit' | 'throw' | 'SIGINT' | 'SIGTERM' | 'SIGKILL';

/** The child: starts the servers, reports them, then ends as told. */
function childScript(names: string[], ending: Ending): string {
  return `
    const s = await import(${JSON.stringify(servicesEntry)});
    for (const name of ${JSON.stringify(names)}) {
      const r = await s.useService(name, { provider: 'local', log: () => {} });
      if (r.skipped) { console.log(JSON.stringify({ skipped: name, reason: r.reason })); continue; }
      console.log(JSON.stringify({ name, pid: r.pid, dir: r.dir }));
    }
    console.log('READY');
    const ending = ${JSON.stringify(ending)};
    if (ending === 'exit') process.exitCode = 0;          // just fall off the end, servers still up
    else if (ending === 'throw') throw new Error('a failing test file');
    else setInterval(() => {}, 1000);                       // wait to be signalled
  `;
}

async function runChild(names: string[], ending: Ending): Promise<{ started: Started[]; skipped: string[]; code: number | null; signal: string | null }> {
  const env = { ...process.env };
  for (const key of ['CAIRN_TEST_POSTGRES_URL', 'CAIRN_TEST_MYSQL_URL', 'CAIRN_TEST_MONGODB_URL', 'CAIRN_TEST_REDIS_URL']) delete env[key];
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', '--input-type=module', '-e', childScript(names, ending)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const started: Started[] = [];
  const skipped: string[] = [];
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'READY') {
      if (ending.startsWith('SIG')) child.kill(ending as NodeJS.Signals);
      continue;
    }
    if (!line.startsWith('{')) continue;
    const msg = JSON.parse(line) as Started & { skipped?: string; reason?: string };
    if (msg.skipped) skipped.push(`${msg.skipped}: ${msg.reason}`);
    else started.push(msg);
  }
  const { code, signal } = await exited;
  if (ending === 'exit') assert.equal(code, 0, stderr);
  if (ending === 'throw') assert.equal(code, 1, stderr);
  return { started, skipped, code, signal };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} (after ${ms} ms)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('cleanup when the test process ends', () => {
  // Redis (fast) everywhere, and PostgreSQL (run as another user when we are root, with child
  // processes of its own) where the ending is hardest. When CAIRN_TEST_REQUIRE names them, a
  // missing one fails the child and so the test.
  // A deadline, not a timing assertion: the watchdog itself gives a server 10 s before SIGKILL.
  const limitMs = 20_000;
  for (const [ending, names] of [
    ['exit', ['redis', 'postgres']], // 'exit' handler: synchronous kill; the watchdogs remove the dirs
    ['throw', ['redis']], // an uncaught error ends the process the same way
    ['SIGINT', ['redis']], // signal handler: graceful stop, then the signal is re-raised
    ['SIGTERM', ['redis', 'postgres']],
    ['SIGKILL', ['redis', 'postgres']], // no handler runs at all: the watchdogs do it
  ] as const) {
    test(`${ending}: ${names.join(' and ')} stopped and temp dirs removed`, async (t) => {
      const { started, skipped, signal } = await runChild([...names], ending);
      if (started.length === 0) {
        t.skip(skipped.join('; '));
        return;
      }
      if (ending.startsWith('SIG')) assert.equal(signal, ending, 'the child died by the signal it got');
      for (const s of started) {
        await eventually(`${s.name} pid ${s.pid} is gone`, () => !isAlive(s.pid), limitMs);
        await eventually(`${s.name} dir ${s.dir} is removed`, () => !existsSync(s.dir), limitMs);
      }
    });
  }
});
