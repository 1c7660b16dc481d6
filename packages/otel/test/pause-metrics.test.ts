import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine, createMemoryStore, defineWorkflow } from '@cairn/core';
import { cairnTelemetry } from '@cairn/otel';
import { inMemorySdk } from './helpers/otel-sdk.js';

describe('@cairn/otel: pause and resume', () => {
  it('counts pauses and resumes by workflow and scope, and a paused execution ends its span suspended (paused)', async () => {
    const sdk = inMemorySdk();
    const telemetry = cairnTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = defineWorkflow('otel-pause', async (ctx) => {
      await ctx.step('slow', async () => gate);
      return ctx.step('after', () => 'done');
    });
    const engine = createEngine({ store: createMemoryStore(), workflows: [wf], recoveryIntervalMs: 60_000 });
    await engine.start();
    try {
      const handle = await engine.startRun(wf, null);
      for (let i = 0; i < 200 && (await engine.getRun(handle.id))?.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 5));
      await engine.pause(handle.id, { reason: 'test' });
      await engine.pause(handle.id);
      release();
      for (let i = 0; i < 200 && (await engine.getRun(handle.id))?.status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 5));
      await engine.resume(handle.id);
      assert.equal(await handle.result({ timeout: '10s' }), 'done');
      await engine.pauseWorkflow(wf.name);
      await engine.resumeWorkflow(wf.name);
    } finally {
      await engine.stop();
      telemetry.close();
    }
    assert.equal(await sdk.metric('cairn.runs.paused', { 'cairn.workflow': 'otel-pause', 'cairn.pause.scope': 'run' }), 1, 'one pause written');
    assert.equal(await sdk.metric('cairn.runs.unpaused', { 'cairn.workflow': 'otel-pause', 'cairn.pause.scope': 'run' }), 1);
    const spans = sdk.spans().filter((s) => s.name === 'cairn.run otel-pause');
    assert.deepEqual(
      spans.map((s) => [s.attributes['cairn.outcome'], s.attributes['cairn.suspend.reasons'] ?? null]),
      [
        ['suspended', 'paused'],
        ['completed', null],
      ],
    );
  });
});
