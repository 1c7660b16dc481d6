import assert from 'node:assert/strict';
import type { Json } from '@cairn/core';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { newStep, runningRun } from '../fixtures/run-fixtures.js';
import { payloadBytes, payloadOfBytes } from '../fixtures/payloads.js';

// deepStrictEqual on a megabyte string prints the whole thing on failure; compare and say less.
function assertSamePayload(actual: Json | undefined, expected: Json, where: string): void {
  if (actual === undefined) assert.fail(`${where}: the payload is missing`);
  const same = JSON.stringify(actual) === JSON.stringify(expected);
  assert.ok(same, `${where}: a ${payloadBytes(expected)}-byte payload came back different (${payloadBytes(actual)} bytes)`);
  assert.deepStrictEqual(actual, expected, where);
}

/** Store contract: payloads as large as the backend allows, up to 1 MiB, in every place JSON is stored. */
export const payloadsGroup: CaseGroup = caseGroup('store.payloads', 'store: large payloads', [
  conformanceCase('run input and output at the payload limit round-trip', async ({ store, t0, payloadLimit }) => {
    const big = payloadOfBytes(payloadLimit);
    const { run, fence } = await runningRun(store, t0, { input: big });
    assertSamePayload((await store.runs.get(run.id))?.input, big, 'run input');
    await store.runs.transition(run.id, fence, { from: ['running'], to: 'completed', output: big }, t0 + 1);
    assertSamePayload((await store.runs.get(run.id))?.output, big, 'run output');
  }),

  conformanceCase('step and attempt output at the payload limit round-trip', async ({ store, t0, payloadLimit }) => {
    const big = payloadOfBytes(payloadLimit);
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    await store.steps.transition(
      run.id,
      fence,
      { key: 'charge', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: big }, endAttempt: { status: 'succeeded', output: big } },
      t0 + 1,
    );
    assertSamePayload((await store.steps.load(run.id))[0]?.output, big, 'step output');
    assertSamePayload((await store.history.list(run.id))[0]?.output, big, 'attempt output');
  }),

  conformanceCase('state value and event payload at the payload limit round-trip', async ({ store, t0, payloadLimit }) => {
    const big = payloadOfBytes(payloadLimit);
    const { run, fence } = await runningRun(store, t0);
    await store.state.set(run.id, fence, 'big', big, t0);
    assertSamePayload((await store.state.get(run.id)).big, big, 'state value');
    await store.events.deliver(run.id, 'big', big, t0);
    assertSamePayload((await store.events.get(run.id, 'big', 1))?.payload, big, 'event payload');
  }),

  conformanceCase('version descriptor at the payload limit round-trips', async ({ store, t0, payloadLimit }) => {
    const big = payloadOfBytes(payloadLimit);
    await store.versions.upsert('orders', 'v1', big, t0);
    assertSamePayload((await store.versions.get('orders', 'v1'))?.descriptor, big, 'descriptor');
  }),
]);
