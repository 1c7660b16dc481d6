import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { CAIRN_MIGRATION_NAMES } from '../../src/index.js';
import { atMigrationBefore } from './migration-upgrade.js';
import type { Target } from './targets.js';

const T0 = 1_750_000_000_000;
const TRACE = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'k=v' };

/**
 * `cairn_0007_run_trace_context` on a database at the migration before it: runs written before
 * keep their data and read back without `traceContext`; afterwards it is stored; down drops it (a
 * run without one can still be created) and up runs again. Registered inside `storeCases`.
 */
export function runTraceContextMigrationCase(target: Target): void {
  it('cairn_0007_run_trace_context upgrades a database at the migration before it; old runs have no trace context; down and up again', async () => {
    await atMigrationBefore(target, 'cairn_0007_run_trace_context', async ({ migrator, store, index }) => {
      const { run: old } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: { a: 1 } }, T0);

      const up = await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index]!);
      assert.equal(up.error, undefined, `migration failed: ${String(up.error)}`);
      assert.deepEqual(
        up.results?.map((r) => [r.migrationName, r.status]),
        [[CAIRN_MIGRATION_NAMES[index], 'Success']],
      );
      const before = await store.runs.get(old.id);
      assert.deepEqual([before?.input, 'traceContext' in before!], [{ a: 1 }, false]);
      const { run: traced } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, traceContext: TRACE }, T0);
      assert.deepEqual((await store.runs.get(traced.id))?.traceContext, TRACE);

      const down = await migrator.migrateDown();
      assert.equal(down.error, undefined, `migration failed: ${String(down.error)}`);
      assert.deepEqual(
        down.results?.map((r) => [r.migrationName, r.direction, r.status]),
        [[CAIRN_MIGRATION_NAMES[index], 'Down', 'Success']],
      );
      const after = await store.runs.get(traced.id);
      assert.deepEqual([after?.input, 'traceContext' in after!], [null, false]);
      const { created } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null }, T0);
      assert.equal(created, true, 'a run without a trace context is created before the migration');

      await migrator.migrateTo(CAIRN_MIGRATION_NAMES[index]!);
      const { run: again } = await store.runs.create({ id: randomUUID(), workflow: 'wf', version: 'v1', input: null, traceContext: TRACE }, T0);
      assert.deepEqual((await store.runs.get(again.id))?.traceContext, TRACE);
    });
  });
}
