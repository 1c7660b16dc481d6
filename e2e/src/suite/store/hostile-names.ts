import assert from 'node:assert/strict';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { HOSTILE_NAMES, label } from '../fixtures/hostile-strings.js';
import { createRun, newRun, newStep, runningRun } from '../fixtures/run-fixtures.js';

/** Store contract: names that break naive backends, in every place a name is stored or matched. */
export const hostileNamesGroup: CaseGroup = caseGroup('store.names', 'store: hostile names', [
  conformanceCase('workflow names round-trip and filter exactly (no wildcard or prefix matching)', async ({ store, t0 }) => {
    const runs = new Map<string, string>();
    for (const workflow of HOSTILE_NAMES) runs.set(workflow, (await createRun(store, t0, { workflow })).id);
    // Near-misses a LIKE, glob or prefix match would also return.
    for (const decoy of ['wild-card_and*glob?[x]', 'wild%cardXand*glob?[x]', 'with.dots.in', '$wher', 'a:b']) await createRun(store, t0, { workflow: decoy });
    for (const [workflow, id] of runs) {
      const listed = (await store.runs.list({ workflow })).runs;
      assert.deepEqual(
        listed.map((r) => r.id),
        [id],
        `list({ workflow: ${label(workflow)} })`,
      );
      assert.equal(listed[0]?.workflow, workflow, `workflow ${label(workflow)} comes back byte for byte`);
      assert.equal((await store.runs.get(id))?.workflow, workflow);
    }
  }),

  conformanceCase('idempotency keys round-trip and match exactly', async ({ store, t0 }) => {
    for (const key of HOSTILE_NAMES) {
      const first = await store.runs.create(newRun({ idempotencyKey: key }), t0);
      assert.equal(first.created, true, `key ${label(key)} must not collide with an earlier one`);
      assert.equal(first.run.idempotencyKey, key);
      const again = await store.runs.create(newRun({ idempotencyKey: key }), t0);
      assert.equal(again.created, false, `key ${label(key)} must be found again`);
      assert.equal(again.run.id, first.run.id);
    }
  }),

  conformanceCase('step keys and names round-trip and stay distinct', async ({ store, t0 }) => {
    const { run, fence } = await runningRun(store, t0);
    for (const [seq, name] of HOSTILE_NAMES.entries()) {
      const { created } = await store.steps.insert(run.id, fence, newStep({ key: `${name}#2`, name, seq, status: 'succeeded', output: seq }), t0);
      assert.equal(created, true, `step ${label(name)} collided with an earlier key`);
    }
    const loaded = await store.steps.load(run.id);
    assert.deepEqual(
      loaded.map((s) => [s.key, s.name, s.output]),
      HOSTILE_NAMES.map((name, seq) => [`${name}#2`, name, seq]),
    );
    const hostile = HOSTILE_NAMES[0]!;
    const transitioned = await store.steps.insert(run.id, fence, newStep({ key: hostile, name: hostile, seq: 100 }), t0);
    assert.equal(transitioned.created, true);
    await store.steps.transition(
      run.id,
      fence,
      { key: hostile, from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'ok' }, endAttempt: { status: 'succeeded' } },
      t0 + 1,
    );
    assert.deepEqual(
      (await store.history.list(run.id)).map((a) => [a.stepKey, a.status]),
      [[hostile, 'succeeded']],
    );
  }),

  conformanceCase('event names round-trip and stay distinct', async ({ store, t0 }) => {
    const run = await createRun(store, t0);
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      assert.deepEqual(
        await store.events.deliver(run.id, name, i, t0, { idempotencyKey: name }),
        { delivered: true, duplicate: false, seq: 1 },
        `event ${label(name)}`,
      );
    }
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const event = await store.events.get(run.id, name, 1);
      assert.equal(event?.name, name);
      assert.equal(event?.idempotencyKey, name, `idempotency key ${label(name)}`);
      assert.deepEqual(
        await store.events.deliver(run.id, 'repeat', i, t0, { idempotencyKey: name }),
        { delivered: false, duplicate: true, seq: 1 },
        `idempotency key ${label(name)} is matched exactly`,
      );
      assert.equal(event?.payload, i, `event ${label(name)} read back another event's payload`);
    }
  }),

  conformanceCase('workflow and version names of versions round-trip', async ({ store, t0 }) => {
    for (const [i, name] of HOSTILE_NAMES.entries()) await store.versions.upsert(name, name, i, t0 + i);
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const listed = await store.versions.list(name);
      assert.deepEqual(
        listed.map((v) => [v.workflow, v.version, v.descriptor]),
        [[name, name, i]],
        `versions of ${label(name)}`,
      );
    }
  }),
]);
