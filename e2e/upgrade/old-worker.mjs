// The old-build half of the mixed-fleet test (e2e/upgrade/README.md, "Mixed fleets"). Copied into
// the temp dir that e2e/upgrade/harness.ts `layOutOldBuild` makes (an earlier build's @cairn/core
// and @cairn/kysely, the workspace's drivers) and run there as a child process with an IPC
// channel, so `@cairn/*` resolves to that build only.
//
// Config: JSON in CAIRN_MIXED_CONFIG: { db: { kind: 'sqlite', file } | { kind: 'postgres', url },
// workflows (file URL of workflows.ts), log, workerId, recoveryIntervalMs, leaseMs }.
//
// Opens the store the way the build does by default (migrating on open). When that is refused it
// sends { type: 'refused', error: { name, code, message } } and exits. Otherwise it starts an
// engine with workers, sends { type: 'ready' } and answers the parent's requests until told to
// stop: { id, op: 'start', workflow, n } -> { id, runId }; { id, op: 'send', runId, name, payload }
// -> { id, result }; { id, op: 'stop' } -> { id } (then exits). Failures answer { id, error }. The
// engine's warnings and errors are sent as { type: 'log', level, message, data }.
// Uses only API that 69ed3f8 has.
import * as core from '@cairn/core';
import * as kyselyStore from '@cairn/kysely';

const config = JSON.parse(process.env.CAIRN_MIXED_CONFIG ?? '{}');
const send = (message) => new Promise((resolve) => process.send(message, resolve));
const describeError = (error) => ({ name: error?.name, code: error?.code, message: error?.message ?? String(error) });
/** A log entry's data as JSON, errors as their name, code, message and cause. */
const logData = (data) =>
  data === undefined
    ? undefined
    : JSON.stringify(data, (_, value) =>
        value instanceof Error ? { ...describeError(value), ...(value.cause ? { cause: describeError(value.cause) } : {}) } : value,
      );

async function openStore() {
  if (config.db.kind === 'sqlite') return kyselyStore.openSqliteStore(config.db.file);
  // 69ed3f8 has no @cairn/kysely/postgres: a store is a Kysely instance the caller migrates
  // (migrateToLatest, its documented way) and hands to createKyselyStore.
  const { Kysely, PostgresDialect } = await import('kysely');
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: config.db.url, max: 10 });
  pool.on('error', () => {});
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  try {
    await kyselyStore.migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return kyselyStore.createKyselyStore({ db, dialect: 'postgres', ownsDb: true });
}

let store;
try {
  store = await openStore();
} catch (error) {
  await send({ type: 'refused', error: describeError(error) });
  process.exit(0);
}

const { upgradeWorkflows } = await import(config.workflows);
const engine = core.createEngine({
  store,
  workflows: upgradeWorkflows(core.defineWorkflow, config.log),
  workerId: config.workerId,
  recoveryIntervalMs: config.recoveryIntervalMs,
  timings: { leaseMs: config.leaseMs },
  stopGraceMs: 5000,
  logger: {
    warn: (message, data) => void send({ type: 'log', level: 'warn', message, data: logData(data) }),
    error: (message, data) => void send({ type: 'log', level: 'error', message, data: logData(data) }),
  },
});
await engine.start();

process.on('message', async (request) => {
  try {
    if (request.op === 'start') {
      const handle = await engine.startRun(request.workflow, { n: request.n });
      await send({ id: request.id, runId: handle.id });
    } else if (request.op === 'send') {
      const result = await engine.sendEvent(request.runId, request.name, request.payload);
      await send({ id: request.id, result });
    } else if (request.op === 'stop') {
      await engine.stop();
      await store.close();
      await send({ id: request.id });
      process.exit(0);
    } else {
      await send({ id: request.id, error: { message: `unknown op ${request.op}` } });
    }
  } catch (error) {
    await send({ id: request.id, error: describeError(error) });
  }
});
await send({ type: 'ready' });
