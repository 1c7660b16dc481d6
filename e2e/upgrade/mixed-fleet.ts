/**
 * The mixed-fleet test's machinery (e2e/upgrade/README.md, "Mixed fleets"): a worker process of an
 * earlier build (e2e/upgrade/old-worker.mjs in the dir `layOutOldBuild` makes) and an engine of
 * today's build in this process, on one database at once, each starting runs and sending events.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { Engine } from '@cairn/core';
import { countBodies, type UpgradeDb } from './harness.js';
import { KINDS, eventPayload, expectedFor, type KindSpec } from './workflows.js';

const here = dirname(fileURLToPath(import.meta.url));
const bench = createRequire(join(here, '..', '..', 'bench', 'package.json'));

/** The worker ids the two builds run under: every attempt records its worker, so each run says which build executed it. */
export const OLD_WORKER = 'old-build';
export const NEW_WORKER = 'new-build';

export type Side = 'old' | 'new';

/** Copies old-worker.mjs into a dir made by `layOutOldBuild`. */
export function addOldWorker(root: string): void {
  copyFileSync(join(here, 'old-worker.mjs'), join(root, 'old-worker.mjs'));
}

type Reply = { id: number; error?: { name?: string; code?: string; message: string } } & Record<string, unknown>;

function spawnOld(root: string, config: object): ChildProcess {
  // tsx loads workflows.ts; no --conditions=@cairn/source (the tarballs have no such condition anyway).
  return spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(root, 'old-worker.mjs')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: '', CAIRN_MIXED_CONFIG: JSON.stringify(config) },
  });
}

export interface Refusal {
  refused: true;
  error: { name?: string; code?: string; message: string };
  output: string;
}

/** How the old worker's engine is tuned (see the test for why). */
export interface OldWorkerOptions {
  recoveryIntervalMs: number;
  leaseMs: number;
}

/**
 * A worker process of the old build: it opens the store the way that build does by default
 * (migrating on open), then runs an engine with workers. `start` resolves to the refusal instead
 * when the build does not let itself open the store.
 */
export class OldWorker {
  readonly logs: { level: string; message: string; data?: string }[] = [];
  output = '';
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private exited = false;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.on('message', (message: Reply & { type?: string; level?: string; message?: string; data?: string }) => {
      if (message.type === 'log') this.logs.push({ level: message.level!, message: message.message!, ...(message.data ? { data: message.data } : {}) });
      else if (typeof message.id === 'number') this.pending.get(message.id)?.(message);
    });
    child.on('exit', (code) => {
      this.exited = true;
      for (const resolve of this.pending.values()) resolve({ id: -1, error: { message: `the old worker exited (${code}):\n${this.output}` } });
      this.pending.clear();
    });
  }

  static async start(root: string, db: UpgradeDb, log: string, options: OldWorkerOptions): Promise<OldWorker | Refusal> {
    const config = { db, workflows: pathToFileURL(join(here, 'workflows.ts')).href, log, workerId: OLD_WORKER, ...options };
    const child = spawnOld(root, config);
    const worker = new OldWorker(child);
    return new Promise<OldWorker | Refusal>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the old worker did not start within 30 s:\n${worker.output}`));
      }, 30_000);
      let refusal: Refusal['error'] | undefined;
      child.on('message', (message: { type?: string; error?: Refusal['error'] }) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve(worker);
        } else if (message.type === 'refused') refusal = message.error;
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (refusal) resolve({ refused: true, error: refusal, output: worker.output });
        else reject(new Error(`the old worker exited with ${code} before it was ready:\n${worker.output}`));
      });
    });
  }

  async request(message: Record<string, unknown>): Promise<Reply> {
    if (this.exited) throw new Error(`the old worker has exited:\n${this.output}`);
    const id = this.nextId++;
    const reply = new Promise<Reply>((resolve) => this.pending.set(id, resolve));
    this.child.send({ ...message, id });
    const answer = await reply;
    this.pending.delete(id);
    if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code, name: answer.error.name ?? 'Error' });
    return answer;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exit = new Promise<void>((resolve) => this.child.on('exit', () => resolve()));
    await this.request({ op: 'stop' }).catch(() => this.child.kill('SIGKILL'));
    await exit;
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/** Starts runs and sends events: the old worker process, or an engine of today's build. */
export interface FleetSide {
  start(workflow: string, n: number): Promise<string>;
  send(runId: string, name: string, payload: unknown): Promise<unknown>;
}

export function oldSide(worker: OldWorker): FleetSide {
  return {
    start: async (workflow, n) => (await worker.request({ op: 'start', workflow, n })).runId as string,
    send: async (runId, name, payload) => (await worker.request({ op: 'send', runId, name, payload })).result,
  };
}

export function todaySide(engine: Engine): FleetSide {
  return {
    start: async (workflow, n) => (await engine.startRun(workflow, { n })).id,
    send: (runId, name, payload) => engine.sendEvent(runId, name, payload as never),
  };
}

/**
 * The three sides of the fleet: `old`, the old build's worker process; `new`, today's engine with
 * workers (an event it sends wakes the run on its own queue: it resumes the run itself); `api`,
 * today's engine without workers (an event it sends makes the run due in the store, and the first
 * worker whose recovery pass finds it resumes it: with the test's timings, the old one).
 */
export type Sender = 'old' | 'new' | 'api';

export interface FleetRun {
  runId: string;
  kind: string;
  workflow: string;
  n: number;
  /** The build whose engine started it (for a child: the parent's). */
  starter: Side;
  /** Set on child runs: the parent's id. */
  parent?: string;
}

/** The kinds of the mixed fleet: every kind of the upgrade test. */
export const FLEET_KINDS: readonly KindSpec[] = KINDS;

/** A step attempt as the history lists it: which step, which worker. */
type Attempt = { stepName: string; worker?: string | undefined; startedAt: number };

/**
 * What a run must return and which bodies it must run how often. As in the upgrade test, except a
 * failed step's `compensate`: 69ed3f8 runs it when the step has failed for good, as soon as its
 * execution reaches the failure, first run or replay (and records it as a step `<key>:compensate`);
 * today's build runs it only for a succeeded step when the run fails. So `charge:compensate` runs
 * once when the old build ran the step `charge` or resumed the run past it (it then ran `b`), and
 * never otherwise.
 */
export function expectedInFleet(run: FleetRun, attempts: readonly Attempt[]): ReturnType<typeof expectedFor> {
  const expected = expectedFor(run.workflow, run.n);
  if (run.workflow !== 'upg-compensate') return expected;
  const oldPassed = attempts.some((a) => a.worker === OLD_WORKER && (a.stepName === 'charge' || a.stepName === 'b'));
  const { 'charge:compensate': _, ...bodies } = expected.bodies;
  return { ...expected, bodies: oldPassed ? expected.bodies : bodies };
}

/**
 * The one way a run of the fleet may fail, documented: 69ed3f8 cannot replay a fan-out whose
 * branches make further calls after steps that finished out of call order (its history numbers
 * calls in completion order), whichever build recorded it, and fails the run with its own
 * `NON_DETERMINISM` message. Today's build's message is different ("... guard the change with
 * ctx.patched(id) ...").
 */
export const OLD_FANOUT_WORKFLOW = 'upg-fanout-branches';
export const OLD_FANOUT_DIVERGENCE =
  /^Run [0-9a-f-]{36}: call #\d+ is task "[ab]2", but the history has task "[ab]2" at #\d+\. The workflow code changed under a running run; register the new code as a new version\.$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until run `runId` is suspended on an event wait (status waiting, no lease, an event step waiting). */
async function waitingForEvent(engine: Engine, runId: string, deadline: number): Promise<void> {
  for (;;) {
    const run = await engine.getRun(runId);
    if (run?.status === 'waiting' && !run.lease) {
      const steps = await engine.steps(runId);
      if (steps.some((s) => s.kind === 'event' && s.status === 'waiting')) return;
    }
    if (run && (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled')) {
      throw new Error(`run ${runId} (${run.workflow}) ended ${run.status} before its event: ${JSON.stringify(run.error ?? run.output)}`);
    }
    if (Date.now() > deadline) throw new Error(`run ${runId} (${run?.workflow}) is not waiting for an event (status ${run?.status})`);
    await sleep(25);
  }
}

/** The child run a parent started (found through its child step). */
async function childOf(engine: Engine, runId: string, deadline: number): Promise<string> {
  for (;;) {
    const step = (await engine.steps(runId)).find((s) => s.kind === 'child' && s.childRunId);
    if (step?.childRunId) return step.childRunId;
    if (Date.now() > deadline) throw new Error(`run ${runId} started no child`);
    await sleep(25);
  }
}

/** What the old build's `sendEvent` did when the test had it send an event (the real one follows from today's build). */
export interface OldSendProbe {
  runId: string;
  name: string;
  /** The error it threw, or undefined when it returned. */
  error?: { name?: string; code?: string; message: string };
  result?: unknown;
}

/**
 * Drives one run's events, each sent once the target waits for one: for a run the old build
 * started, the first by `new` (today's build resumes what the old one recorded), the others by
 * `api`; for a run today's build started, the first by `api` (the old build's recovery resumes what
 * today's recorded), the others by `new`. Before the events of `probeWorkflow`'s runs, the old
 * build sends the same event with another payload (`OldSendProbe`).
 */
export async function driveEvents(
  engine: Engine,
  senders: Record<Sender, FleetSide>,
  run: FleetRun,
  spec: KindSpec,
  children: FleetRun[],
  probes: OldSendProbe[],
  probeWorkflow: string,
  timeoutMs: number,
): Promise<string[]> {
  const problems: string[] = [];
  const deadline = Date.now() + timeoutMs;
  let child: string | undefined;
  if (spec.child) {
    child = await childOf(engine, run.runId, deadline);
    children.push({ runId: child, kind: run.kind, workflow: spec.child, n: run.n, starter: run.starter, parent: run.runId });
  }
  for (const [i, event] of spec.events.entries()) {
    const target = event.target === 'run' ? run.runId : child!;
    await waitingForEvent(engine, target, deadline);
    if (run.workflow === probeWorkflow) {
      try {
        const result = await senders.old.send(target, event.name, { probe: 'sent by the old build' });
        probes.push({ runId: target, name: event.name, result });
      } catch (error) {
        const { name, code, message } = error as { name?: string; code?: string; message: string };
        probes.push({ runId: target, name: event.name, error: { ...(name ? { name } : {}), ...(code ? { code } : {}), message } });
      }
    }
    const by: Sender = run.starter === 'old' ? (i === 0 ? 'new' : 'api') : i === 0 ? 'api' : 'new';
    try {
      await senders[by].send(target, event.name, eventPayload(event.name, event.by, run.n));
    } catch (error) {
      problems.push(`sendEvent(${event.name}) by ${by} threw ${(error as { code?: string }).code ?? ''}: ${(error as Error).message}`);
    }
  }
  return problems;
}

export interface FleetVerdict {
  run: FleetRun;
  status: string;
  /**
   * `ok`: completed with its exact output, each body run as often as expected; `old-fanout-divergence`:
   * failed as `OLD_FANOUT_DIVERGENCE` says, no body run too often; `pending`: not ended yet, no
   * body run too often; `wrong`: anything else (a wrong output, a body run too often, another
   * failure, an event that could not be sent by today's build).
   */
  outcome: 'ok' | 'old-fanout-divergence' | 'pending' | 'wrong';
  problems: string[];
  errorCode?: string;
  errorMessage?: string;
  /** The builds whose workers ran an attempt of this run. */
  touchedBy: Side[];
  /** The builds in the order their attempts started, repeats collapsed (`['old', 'new']`: handed from the old build to today's). */
  sequence: Side[];
}

const isEnded = (status: string | undefined) => status === 'completed' || status === 'failed' || status === 'cancelled';

/** Waits until every run has ended or `timeoutMs` passed. */
export async function waitForEnd(engine: Engine, runs: FleetRun[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records = await Promise.all(runs.map((r) => engine.getRun(r.runId)));
    if (records.every((r) => isEnded(r?.status)) || Date.now() > deadline) return;
    await sleep(100);
  }
}

/** Judges each run as it is now: status, output, body executions, which builds ran it. */
export async function judgeFleet(engine: Engine, runs: FleetRun[], log: string, sendProblems: Map<string, string[]>): Promise<FleetVerdict[]> {
  // The runs, the log, the runs again, until nothing moved in between: the log then holds exactly
  // the bodies that ran up to what the runs and their attempts show.
  const readRuns = () => Promise.all(runs.map(async (run) => ({ run, record: await engine.getRun(run.runId), history: await engine.history(run.runId) })));
  let read = await readRuns();
  let counts = countBodies(log);
  // Compared on what the judgement uses (a claim moves a run's lease and fence, not these).
  const shape = (r: typeof read) =>
    r.map(({ record, history }) => [record?.status, record?.output, history.map((a) => [a.stepName, a.attempt, a.status, a.worker])]);
  for (let again = await readRuns(); !isDeepStrictEqual(shape(again), shape(read)); again = await readRuns()) {
    read = again;
    counts = countBodies(log);
  }
  const verdicts: FleetVerdict[] = [];
  for (const { run, record, history } of read) {
    const attempts = [...history].sort((a, b) => a.startedAt - b.startedAt);
    const expected = expectedInFleet(run, attempts);
    const problems = [...(sendProblems.get(run.runId) ?? [])];
    let wrong = problems.length > 0;
    const status = record?.status ?? 'missing';
    const divergence =
      status === 'failed' &&
      run.workflow === OLD_FANOUT_WORKFLOW &&
      record?.error?.code === 'NON_DETERMINISM' &&
      OLD_FANOUT_DIVERGENCE.test(record.error.message);
    if (status === 'completed') {
      if (!isDeepStrictEqual(record!.output, expected.output)) {
        problems.push(`output ${JSON.stringify(record!.output)} != expected ${JSON.stringify(expected.output)}`);
        wrong = true;
      }
    } else {
      problems.push(`status ${status}`);
      if (isEnded(status) && !divergence) wrong = true;
    }
    // A body run too often is wrong whatever the status; too few only in a completed run.
    const ran = counts.get(run.runId) ?? new Map<string, number>();
    for (const name of new Set([...Object.keys(expected.bodies), ...ran.keys()])) {
      const want = expected.bodies[name] ?? 0;
      const got = ran.get(name) ?? 0;
      if (got > want || (status === 'completed' && got !== want)) {
        problems.push(`body ${name} ran ${got}x, expected ${want}x`);
        wrong = true;
      }
    }
    const sequence: Side[] = [];
    for (const attempt of attempts) {
      const side: Side | undefined = attempt.worker === OLD_WORKER ? 'old' : attempt.worker === NEW_WORKER ? 'new' : undefined;
      if (!side) {
        problems.push(`an attempt by an unknown worker ${attempt.worker}`);
        wrong = true;
      } else if (sequence.at(-1) !== side) sequence.push(side);
    }
    const touchedBy = (['old', 'new'] as const).filter((side) => sequence.includes(side));
    verdicts.push({
      run,
      status,
      outcome: wrong ? 'wrong' : problems.length === 0 ? 'ok' : divergence ? 'old-fanout-divergence' : 'pending',
      problems,
      touchedBy,
      sequence,
      ...(record?.error ? { errorCode: record.error.code ?? record.error.name, errorMessage: record.error.message } : {}),
    });
  }
  return verdicts;
}

/** Runs handed from one build to the other: `from` ran an attempt, then `to` did. */
export function handedOver(verdicts: FleetVerdict[], from: Side, to: Side): number {
  return verdicts.filter((v) => v.sequence.some((side, i) => side === from && v.sequence[i + 1] === to)).length;
}

/** One line per kind: runs that ended right, which builds ran them, and the distinct problems. */
export function fleetSummary(verdicts: FleetVerdict[]): string {
  const lines: string[] = [];
  for (const spec of FLEET_KINDS) {
    const of = verdicts.filter((v) => v.run.kind === spec.kind);
    const ok = of.filter((v) => v.outcome === 'ok').length;
    const both = of.filter((v) => v.touchedBy.length === 2).length;
    const reasons = new Map<string, number>();
    for (const v of of.filter((x) => x.outcome !== 'ok')) {
      const reason =
        `${v.outcome}: ${v.run.parent ? 'child ' : ''}started by ${v.run.starter}, ran on ${v.sequence.join('>') || 'none'}: ${v.errorCode ? `${v.errorCode} ` : ''}${(v.errorMessage ? `${v.errorMessage}; ` : '') + v.problems.join('; ')}`.replace(
          /[0-9a-f]{8}-[0-9a-f-]{27}/g,
          '<id>',
        );
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    lines.push(`${spec.kind}: ${ok}/${of.length} ok, ${both} ran on both builds${[...reasons].map(([r, c]) => `\n    ${c}x ${r}`).join('')}`);
  }
  return lines.join('\n');
}

/**
 * The schema as the database describes it (tables, columns, indexes, routines, the migrations
 * table's rows), to show that a refused open wrote nothing.
 */
export async function schemaFingerprint(db: UpgradeDb): Promise<string> {
  if (db.kind === 'sqlite') {
    const Database = bench('better-sqlite3') as new (
      file: string,
      options: { readonly: boolean },
    ) => {
      prepare(sql: string): { all(): unknown[] };
      close(): void;
    };
    const database = new Database(db.file, { readonly: true });
    try {
      const schema = database.prepare('select type, name, sql from sqlite_master order by type, name').all();
      const migrations = database.prepare('select name from cairn_migrations order by name').all();
      return JSON.stringify({ schema, migrations });
    } finally {
      database.close();
    }
  }
  const { default: pg } = (await import(pathToFileURL(bench.resolve('pg')).href)) as {
    default: {
      Client: new (options: {
        connectionString: string;
      }) => { connect(): Promise<void>; query(sql: string): Promise<{ rows: unknown[] }>; end(): Promise<void> };
    };
  };
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const columns = await client.query(
      `select table_name, column_name, data_type, is_nullable from information_schema.columns where table_schema = 'public' order by table_name, column_name`,
    );
    const indexes = await client.query(`select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`);
    const routines = await client.query(
      `select p.proname, pg_get_function_identity_arguments(p.oid) as args from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public' order by 1, 2`,
    );
    const migrations = await client.query('select name from cairn_migrations order by name');
    return JSON.stringify({ columns: columns.rows, indexes: indexes.rows, routines: routines.rows, migrations: migrations.rows });
  } finally {
    await client.end();
  }
}
