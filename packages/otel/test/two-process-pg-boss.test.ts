/**
 * One workflow across processes is one trace: the test process starts a run inside a span and
 * runs no workers; two worker processes (engines over one PostgreSQL store and pg-boss, each with
 * its own OpenTelemetry SDK and in-memory exporters) execute it. The spans the three processes
 * recorded form one trace whose parent ids nest as the run did.
 */
import assert from 'node:assert/strict';
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { createEngine } from '@cairn/core';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, usePostgres } from '@cairn/conformance/services';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { createPgBossQueue } from '@cairn/queue-pg-boss';
import { cairnTelemetry } from '@cairn/otel';
import { inMemorySdk } from './helpers/otel-sdk.js';
import { type SpanRecord, tracedChild, tracedParent } from './fixtures/traced-workflows.js';

const service = await usePostgres();
const workerScript = fileURLToPath(new URL('./fixtures/pg-boss-worker.ts', import.meta.url));

interface Worker {
  child: ChildProcessByStdio<Writable, Readable, null>;
  lines: AsyncIterator<string>;
}

async function startWorker(dbUrl: string, name: string): Promise<Worker> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@cairn/source', workerScript, dbUrl, name], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  assert.equal(first.value, 'ready', `worker ${name} did not start`);
  return { child, lines };
}

async function stopWorker(worker: Worker): Promise<{ spans: SpanRecord[]; metrics: Record<string, number> }> {
  worker.child.stdin.write('stop\n');
  const line = await worker.lines.next();
  return JSON.parse(line.value as string);
}

describe('@cairn/otel across processes on pg-boss', { skip: service.skipped ? `no PostgreSQL: ${service.reason}` : false }, () => {
  let dbUrl = '';
  before(async () => {
    if (!service.skipped) dbUrl = await createPostgresDatabase(service.url);
  });
  after(async () => {
    if (dbUrl) await dropPostgresDatabase(dbUrl);
    await stopSharedServices();
  });

  it('a run with a retried step, a sleep, a child and a queued step, executed by two worker processes, is one trace nested by parent ids; metrics count it', {
    timeout: 120_000,
  }, async (tc) => {
    const sdk = inMemorySdk();
    const telemetry = cairnTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    const store = await openPostgresStore(dbUrl);
    const queue = createPgBossQueue({ connectionString: dbUrl, schema: 'cairn_jobs', pollingIntervalSeconds: 0.5 });
    // The caller: it starts runs and executes none (no workers).
    const caller = createEngine({ store, queue, workflows: [tracedParent, tracedChild], recoveryIntervalMs: 60_000, traceContext: telemetry.traceContext });
    await caller.start({ workers: false });
    const workers = [await startWorker(dbUrl, 'worker-a'), await startWorker(dbUrl, 'worker-b')];
    const reports: { spans: SpanRecord[]; metrics: Record<string, number> }[] = [];
    let callerSpans: ReturnType<typeof sdk.spans> = [];
    try {
      const root = sdk.tracer.startSpan('checkout');
      const handle = await context.with(trace.setSpan(context.active(), root), () => caller.startRun(tracedParent, null));
      root.end();
      assert.deepEqual(await handle.result({ timeout: '60s' }), { c: 42, q: 'q' });
      for (const worker of workers) reports.push(await stopWorker(worker));
      callerSpans = sdk.spans();
    } finally {
      for (const worker of workers) worker.child.kill();
      telemetry.close();
      await caller.stop();
      await queue.close();
      await store.close();
      await sdk.close();
    }

    const rootRecord = callerSpans.find((s) => s.name === 'checkout')!;
    const rootId = rootRecord.spanContext().spanId;
    const spans = reports.flatMap((r) => r.spans);
    const t = (what: string) =>
      `${what}; spans: ${JSON.stringify(spans.map((s) => [s.process, s.name, s.spanId, s.parentSpanId, s.attributes['cairn.outcome']]))}`;
    assert.deepEqual(new Set(spans.map((s) => s.traceId)), new Set([rootRecord.spanContext().traceId]), t('one trace'));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const executions = spans.filter((s) => s.name === 'cairn.run traced-parent');
    assert.ok(executions.length >= 4, t('the parent run executes at least four times (start, after the sleep, the child, the queued step)'));
    for (const s of executions) assert.equal(s.parentSpanId, rootId, t('each execution of the run is a child of the caller'));
    assert.equal(executions.filter((s) => s.attributes['cairn.outcome'] === 'completed').length, 1, t('one execution completes the run'));
    const flaky = spans
      .filter((s) => s.name === 'cairn.step flaky')
      .sort((a, b) => Number(a.attributes['cairn.step.attempt']) - Number(b.attributes['cairn.step.attempt']));
    assert.deepEqual(
      flaky.map((s) => [s.attributes['cairn.step.attempt'], s.attributes['cairn.outcome']]),
      [
        [1, 'retry'],
        [2, 'succeeded'],
      ],
      t('the retried step'),
    );
    for (const s of flaky) assert.equal(byId.get(s.parentSpanId!)?.name, 'cairn.run traced-parent', t('an inline attempt nests under an execution of its run'));
    const childRuns = spans.filter((s) => s.name === 'cairn.run traced-child');
    assert.equal(childRuns.length, 1, t('the child run executes once'));
    assert.equal(byId.get(childRuns[0]!.parentSpanId!)?.name, 'cairn.run traced-parent', t('the child run nests under the parent execution that started it'));
    const double = spans.filter((s) => s.name === 'cairn.step double');
    assert.equal(double[0]?.parentSpanId, childRuns[0]!.spanId, t('the child’s step nests under the child’s execution'));
    const remote = spans.filter((s) => s.name === 'cairn.step remote');
    assert.equal(remote.length, 1, t('one queued attempt'));
    assert.equal(remote[0]!.attributes['cairn.step.queued'], true);
    const dispatcher = byId.get(remote[0]!.parentSpanId!);
    assert.equal(dispatcher?.name, 'cairn.run traced-parent', t('the queued step nests under the execution that dispatched it'));
    assert.equal(dispatcher?.attributes['cairn.suspend.reasons'], 'queued-step', t('that execution suspended for the queued step'));
    for (const s of spans) assert.equal(s.attributes['cairn.backend'], 'kysely-postgres');

    // Which process ran what depends on which worker took each job; both usually do some.
    tc.diagnostic(`spans by process: ${JSON.stringify(Object.fromEntries(reports.map((r) => [r.spans[0]?.process ?? '(none)', r.spans.map((s) => s.name)])))}`);
    const total = (metric: string) => reports.reduce((n, r) => n + (r.metrics[metric] ?? 0), 0);
    assert.equal(total('cairn.runs.started'), 2, 'two runs started (parent and child)');
    assert.equal(total('cairn.runs.finished.completed'), 2, 'two runs completed');
    assert.equal(total('cairn.step.retries'), 1, 'one retry');
    assert.equal(total('cairn.step.duration'), 4, 'four step attempts timed (flaky twice, double, remote)');
    assert.equal(total('cairn.leases.active'), 0, 'no lease held at the end');
  });
});
