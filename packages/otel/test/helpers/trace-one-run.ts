import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { createEngine, createMemoryStore } from '@cairn/core';
import type { Queue } from '@cairn/core/backend';
import { cairnTelemetry } from '@cairn/otel';
import { inMemorySdk, parentOf } from './otel-sdk.js';
import { tracedChild as child, tracedParent as parent } from '../fixtures/traced-workflows.js';

/**
 * Runs the traced workflow (a retried step, a sleep, a child and a queued step) in this process,
 * over the memory store and `queue` (default: the engine's local queue), started inside a caller
 * span, and checks that its spans are one trace nested by parent ids and that the metrics count it.
 */
export async function traceOneRun(queue?: Queue): Promise<void> {
  const sdk = inMemorySdk();
  const telemetry = cairnTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
  const engine = createEngine({
    store: createMemoryStore(),
    ...(queue === undefined ? {} : { queue }),
    workflows: [parent, child],
    recoveryIntervalMs: 60_000,
    traceContext: telemetry.traceContext,
  });
  await engine.start();
  try {
    const caller = sdk.tracer.startSpan('caller');
    const handle = await context.with(trace.setSpan(context.active(), caller), () => engine.startRun(parent, null));
    caller.end();
    assert.deepEqual(await handle.result({ timeout: '30s' }), { c: 42, q: 'q' });
    await engine.stop();

    const spans = sdk.spans();
    const root = spans.find((s) => s.name === 'caller')!;
    const traceId = root.spanContext().traceId;
    assert.deepEqual(new Set(spans.map((s) => s.spanContext().traceId)), new Set([traceId]), 'one trace');
    const runSpans = (workflow: string) =>
      spans.filter((s) => s.name === `cairn.run ${workflow}`).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const executions = runSpans('traced-parent');
    assert.deepEqual(
      executions.map((s) => s.attributes['cairn.outcome']),
      ['suspended', 'suspended', 'suspended', 'completed'],
    );
    assert.deepEqual(
      executions.map((s) => s.attributes['cairn.suspend.reasons']),
      ['sleep', 'child', 'queued-step', undefined],
    );
    for (const s of executions) assert.equal(parentOf(s), root.spanContext().spanId, 'each execution of the run is a child of the caller');
    const [first, second, third] = executions as [typeof root, typeof root, typeof root];
    const steps = (key: string) => spans.filter((s) => s.name === `cairn.step ${key}`);
    assert.deepEqual(
      steps('flaky').map((s) => [s.attributes['cairn.step.attempt'], s.attributes['cairn.outcome'], parentOf(s)]),
      [
        [1, 'retry', first.spanContext().spanId],
        [2, 'succeeded', first.spanContext().spanId],
      ],
    );
    const childRun = runSpans('traced-child');
    assert.equal(childRun.length, 1);
    assert.equal(parentOf(childRun[0]!), second.spanContext().spanId, 'the child run nests under the execution that started it');
    assert.equal(parentOf(steps('double')[0]!), childRun[0]!.spanContext().spanId);
    const remote = steps('remote');
    assert.equal(remote.length, 1);
    assert.equal(remote[0]!.attributes['cairn.step.queued'], true);
    assert.equal(parentOf(remote[0]!), third.spanContext().spanId, 'the queued step nests under the execution that dispatched it');
    assert.equal(first.attributes['cairn.backend'], 'memory');
    assert.equal(first.attributes['cairn.run.id'], handle.id);

    assert.equal(await sdk.metric('cairn.runs.started'), 2);
    assert.equal(await sdk.metric('cairn.runs.finished', { 'cairn.run.status': 'completed' }), 2);
    assert.equal(await sdk.metric('cairn.step.retries'), 1);
    assert.equal(await sdk.metric('cairn.step.duration'), 4);
    assert.equal(await sdk.metric('cairn.queue.wait', { 'cairn.kind': 'run' }), 2);
    assert.equal(await sdk.metric('cairn.queue.wait', { 'cairn.kind': 'step' }), 1);
    assert.equal(await sdk.metric('cairn.leases.active'), 0);
  } finally {
    telemetry.close();
    await engine.stop();
    await sdk.close();
  }
}
