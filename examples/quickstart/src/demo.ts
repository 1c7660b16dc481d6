// `pnpm demo`: an order workflow on a SQLite file that survives a SIGKILL of its worker process.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CairnError, createEngine, type RunSummary } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { renderTimeline } from '@cairn/cli';
import { executionsLog, order, ship } from './workflows.js';

const dir = join(tmpdir(), `cairn-demo-${process.pid}`);
mkdirSync(dir, { recursive: true });
const db = join(dir, 'cairn.sqlite');
const say = (line: string) => console.log(line);

// The demo's own engine is a client: it reads runs and sends events; the workers execute.
const store = await openSqliteStore(db, { migrate: true });
const engine = createEngine({ store, workflows: [order, ship] });
await engine.start({ workers: false });

function startWorker(name: string): ChildProcess {
  const worker = fork(fileURLToPath(new URL('./worker.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx', '--conditions=@cairn/source'],
    env: { ...process.env, CAIRN_DEMO_DB: db, CAIRN_DEMO_DIR: dir, CAIRN_DEMO_WORKER: name },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return worker;
}
/** A message from a worker: the demo's workers send plain objects with a `type` over IPC. */
type WorkerMessage = { type?: unknown; [field: string]: unknown } | null | undefined;
const once = <T>(worker: ChildProcess, type: string, match: (m: NonNullable<WorkerMessage>) => boolean = () => true) =>
  new Promise<T>((resolve) => {
    const listener = (m: WorkerMessage) => {
      if (m?.type === type && match(m)) {
        worker.off('message', listener);
        resolve(m as T);
      }
    };
    worker.on('message', listener);
  });

say(`Cairn demo — SQLite file ${db}\n`);
const worker1 = startWorker('worker-1');
await once(worker1, 'ready');
say('▶ worker-1 started; submitting two orders (o-1 pays fine, o-2 has a declined card)');
const started = once<{ runId: string }>(worker1, 'started', (m) => m.orderId === 'o-1');
worker1.send({ type: 'start', input: { orderId: 'o-1', card: 'ok' } });
worker1.send({ type: 'start', input: { orderId: 'o-2', card: 'declined' } });
const runA = (await started).runId;

await once(worker1, 'step-started', (m) => m.runId === runA && m.key === 'pack parcel');
await new Promise((r) => setTimeout(r, 300));
const killed = new Promise<NodeJS.Signals | null>((resolve) => worker1.once('exit', (_code, signal) => resolve(signal)));
worker1.kill('SIGKILL');
const signal = await killed;
say(`💥 worker-1 killed with ${signal} while "pack parcel" was running`);
const worker2 = startWorker('worker-2');
await once(worker2, 'ready');
say('▶ worker-2 started: it finds the run through the store (expired lease) and resumes it');

// Wait until the run waits for the manager, then approve it from outside.
for (;;) {
  const steps = await engine.steps(runA);
  if (steps.some((s) => s.key === 'event:manager approval' && s.status === 'waiting')) break;
  await new Promise((r) => setTimeout(r, 50));
}
await engine.sendEvent(runA, 'manager approval', { approvedBy: 'Ada' });
say('✉ event "manager approval" sent');

const resultA = await engine.result(runA, { timeout: '60s' });
const runs = await engine.listRuns({ workflow: 'order' });
const runB = runs.runs.find((r) => r.id !== runA) as RunSummary;
const failureB = await engine.result(runB.id, { timeout: '60s' }).then(
  () => undefined,
  (error: unknown) => error,
);
worker2.kill('SIGTERM');
await new Promise((r) => worker2.once('exit', r));

say('\n── timelines ─────────────────────────────────────────────────────────────');
const child = (await engine.steps(runA)).find((s) => s.kind === 'child');
for (const id of [runA, runB.id, ...(child?.childRunId ? [child.childRunId] : [])]) {
  say(renderTimeline(await engine.timeline(id)));
  say('');
}

// The proof, checked from the store and from the step bodies' own log (outside the engine).
const log = readFileSync(executionsLog(dir), 'utf8')
  .trim()
  .split('\n')
  .map((l) => l.split('\t'));
const runsOf = (runId: string, key: string) => log.filter(([r, k]) => r === runId && k === key).length;
const historyA = await engine.history(runA);
const pack = historyA.filter((h) => h.stepKey === 'pack parcel');
const historyB = await engine.history(runB.id);
const checks: Array<[string, boolean]> = [
  ['order o-1 completed with the payment and the shipment', (await engine.getRun(runA))?.status === 'completed' && JSON.stringify(resultA).includes('pay_o-1')],
  ['worker-1 really died (SIGKILL) mid-step', signal === 'SIGKILL'],
  [
    '"pack parcel": attempt 1 abandoned on worker-1, attempt 2 succeeded on worker-2',
    pack[0]?.status === 'abandoned' && pack[0]?.worker === 'worker-1' && pack[1]?.status === 'succeeded' && pack[1]?.worker === 'worker-2',
  ],
  ['steps finished before the crash were not run again ("reserve stock" ran once)', runsOf(runA, 'reserve stock') === 1],
  [
    '"charge card" failed twice, succeeded on attempt 3',
    historyA
      .filter((h) => h.stepKey === 'charge card')
      .map((h) => h.status)
      .join(',') === 'failed,failed,succeeded',
  ],
  ['the durable sleep, the event and the child workflow all completed', (await engine.steps(runA)).every((s) => s.status === 'succeeded')],
  [
    'order o-2 failed: "card declined" was not retried (1 attempt), and the saga released its stock exactly once',
    CairnError.is(failureB, 'RUN_FAILED') && historyB.filter((h) => h.stepKey === 'charge card').length === 1 && runsOf(runB.id, 'release-stock') === 1,
  ],
];
say('── what this proved ──────────────────────────────────────────────────────');
for (const [claim, ok] of checks) say(`${ok ? '✔' : '✘'} ${claim}`);
await engine.stop();
await store.close();
// The SQLite file stays, for the command line to inspect.
say(
  `\nInspect the runs with the cairn command line (the SQLite file is kept):\n  pnpm cairn show ${runA} --url sqlite:${db}\n  pnpm cairn runs --url sqlite:${db}`,
);
if (checks.some(([, ok]) => !ok)) {
  say('\nThe demo did not prove what it should: that is a bug, please report it.');
  process.exit(1);
}
