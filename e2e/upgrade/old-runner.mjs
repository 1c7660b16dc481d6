// The old-build half of the upgrade test (e2e/upgrade/README.md). Copied into a temp dir whose
// node_modules holds an earlier build's @cairn/core and @cairn/kysely (unpacked tarballs) and
// symlinks to the workspace's drivers, and run there, so `@cairn/*` resolves to that build only.
// It opens the store (migrating as that build does), starts runs of every kind of
// e2e/upgrade/workflows.ts, waits until every run (children included) is suspended, sends the
// events meant to arrive before the upgrade, stops the engine and writes the runs to a manifest.
//
// Config: JSON in CAIRN_UPGRADE_CONFIG: { db: { kind: 'sqlite', file } | { kind: 'postgres', url },
// workflows (file URL of workflows.ts), log, manifest, perKind }.
// Uses only API that 69ed3f8 has; a newer build that renames something gets a branch here.
import { writeFileSync } from 'node:fs';
import * as core from '@cairn/core';
import * as kyselyStore from '@cairn/kysely';

const config = JSON.parse(process.env.CAIRN_UPGRADE_CONFIG ?? '{}');
const { upgradeWorkflows, KINDS, eventPayload } = await import(config.workflows);
const started = Date.now();
const log = (message) => process.stderr.write(`[old build ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

async function openStore() {
  if (config.db.kind === 'sqlite') return kyselyStore.openSqliteStore(config.db.file);
  // @cairn/kysely/postgres arrived after 69ed3f8; before it, a store is a Kysely instance the
  // caller migrates (migrateToLatest) and hands to createKyselyStore.
  try {
    const { openPostgresStore } = await import('@cairn/kysely/postgres');
    return openPostgresStore(config.db.url);
  } catch (error) {
    if (error?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED' && error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  }
  const { Kysely, PostgresDialect } = await import('kysely');
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: config.db.url, max: 10 });
  pool.on('error', () => {});
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  await kyselyStore.migrateToLatest(db);
  return kyselyStore.createKyselyStore({ db, dialect: 'postgres', ownsDb: true });
}

const store = await openStore();
const engine = core.createEngine({
  store,
  workflows: upgradeWorkflows(core.defineWorkflow, config.log),
  recoveryIntervalMs: 200,
  stopGraceMs: 5000,
  logger: {
    warn: (message, data) => log(`engine warn: ${message} ${data ? JSON.stringify(data) : ''}`),
    error: (message, data) => log(`engine error: ${message} ${data ? JSON.stringify(data) : ''}`),
  },
});
await engine.start();

/** @type {{ runId: string, kind: string, workflow: string, n: number, parent?: string, oldStatus?: string }[]} */
const runs = [];
let n = 0;
/** Top-level runs and their children, once every kind is started. */
let expected = 0;

async function startKinds(specs) {
  for (const spec of specs) {
    for (let i = 0; i < config.perKind; i++) {
      n += 1;
      const handle = await engine.startRun(spec.workflow, { n });
      runs.push({ runId: handle.id, kind: spec.kind, workflow: spec.workflow, n });
      expected += spec.child ? 2 : 1;
    }
  }
}

const WAIT_KINDS = new Set(['sleep', 'event', 'child']);

/** Every run of the store, children included. */
async function allRuns() {
  const out = [];
  let cursor;
  do {
    const page = await engine.listRuns({ limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** Why `run` is not (yet) suspended at a wait, or undefined when it is. */
async function notSuspended(run) {
  if (run.status === 'completed') return run.workflow === 'upg-child-echo' ? undefined : 'completed under the old build';
  if (run.status !== 'waiting') return `status ${run.status}`;
  if (run.lease) return 'leased';
  const steps = await engine.steps(run.id);
  const busy = steps.find((s) => s.status !== 'succeeded' && s.status !== 'failed' && !(s.status === 'waiting' && WAIT_KINDS.has(s.kind)));
  if (busy) return `step ${busy.key} ${busy.status}`;
  if (!steps.some((s) => s.status === 'waiting')) return 'no step waiting';
  if (run.wakeAt !== undefined && run.wakeAt <= Date.now() && !steps.some((s) => s.kind === 'sleep' && s.status === 'waiting')) return 'due';
  return undefined;
}

async function waitSuspended(what) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const all = await allRuns();
    const pending = [];
    for (const run of all) {
      const why = await notSuspended(run);
      if (why) pending.push(`${run.id} ${run.workflow}: ${why}`);
    }
    if (all.length === expected && pending.length === 0) return all;
    if (Date.now() > deadline) {
      throw new Error(`${what}: ${all.length}/${expected} runs exist, ${pending.length} not suspended after 30 s:\n  ${pending.slice(0, 20).join('\n  ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Kinds without a timer first; their early events; then the timer kinds, so their timers are as
// far ahead as possible when the engine stops.
await startKinds(KINDS.filter((k) => !k.timer));
await waitSuspended('suspending');
log(`${runs.length} runs started and suspended (${expected} with children)`);

// Events that arrive before the upgrade (delivered while the run waits for another one).
let early = 0;
for (const run of [...runs]) {
  for (const event of KINDS.find((k) => k.workflow === run.workflow).events) {
    if (event.by !== 'old') continue;
    if (event.target !== 'run') throw new Error('early events go to the run itself');
    await engine.sendEvent(run.runId, event.name, eventPayload(event.name, 'old', run.n));
    early += 1;
  }
}
if (early > 0) {
  // Give the woken runs time to replay and suspend again.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await waitSuspended('after the early events');
  log(`sent ${early} events before the upgrade; suspended again`);
}

const timerKinds = KINDS.filter((k) => k.timer);
await startKinds(timerKinds);
await waitSuspended('suspending the timer kinds');
log(`${timerKinds.length} timer kind(s) started and suspended`);

// Children, found through their parents' child steps.
for (const run of [...runs]) {
  for (const step of await engine.steps(run.runId)) {
    if (step.kind === 'child' && step.childRunId) {
      const child = await engine.getRun(step.childRunId);
      runs.push({ runId: child.id, kind: run.kind, workflow: child.workflow, n: child.input.n, parent: run.runId });
    }
  }
}
const firstWake = Math.min(
  ...(await Promise.all(runs.map(async (r) => (await engine.steps(r.runId)).filter((s) => s.kind === 'sleep' && s.status === 'waiting').map((s) => s.wakeAt))))
    .flat()
    .filter((t) => t !== undefined),
);

await engine.stop();
const statuses = new Map((await allRuns()).map((r) => [r.id, r]));
await store.close();
for (const run of runs) run.oldStatus = statuses.get(run.runId)?.status;
const moved = runs.filter((r) => r.oldStatus !== 'waiting' && r.workflow !== 'upg-child-echo');
if (moved.length > 0) {
  throw new Error(
    `${moved.length} runs were not suspended when the old engine stopped (a sleep ran out? raise SLEEP_MS): ${moved.map((r) => `${r.workflow} ${r.oldStatus}`).join(', ')}`,
  );
}
const stoppedAt = Date.now();
if (Number.isFinite(firstWake)) log(`first sleep due ${firstWake - stoppedAt} ms after the old engine stopped`);
writeFileSync(config.manifest, `${JSON.stringify({ runs, stoppedAt }, null, 2)}\n`);
log(`stopped; ${runs.length} runs written to ${config.manifest}`);
