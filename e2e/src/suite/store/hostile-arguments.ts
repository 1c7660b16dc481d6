import assert from 'node:assert/strict';
import type { WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { NOT_STRINGS, show } from '../fixtures/hostile-arguments.js';
import { label } from '../fixtures/hostile-strings.js';
import { createRun, newRun, newStep, runningRun, snapshotRun, terminalRun } from '../fixtures/run-fixtures.js';

/** Every store method, called with `bad` where one string argument belongs. */
function callsWith(store: WorkflowStore, bad: unknown, ids: { running: string; fence: number }, t0: number): Array<[string, () => Promise<unknown>]> {
  const s = bad as string;
  const { running, fence } = ids;
  return [
    ['runs.create (id)', () => store.runs.create(newRun({ id: s }), t0)],
    ['runs.create (workflow)', () => store.runs.create(newRun({ workflow: s }), t0)],
    ['runs.create (idempotencyKey)', () => store.runs.create(newRun({ idempotencyKey: s }), t0)],
    ['runs.get', () => store.runs.get(s)],
    ['runs.list (workflow)', () => store.runs.list({ workflow: s })],
    ['runs.list (status)', () => store.runs.list({ status: [s] as never })],
    ['runs.claim', () => store.runs.claim(s, 'worker-b', 1_000, t0)],
    ['runs.claim (owner)', () => store.runs.claim(running, s, 1_000, t0)],
    ['runs.renew', () => store.runs.renew(s, fence, 1_000, t0)],
    ['runs.transition', () => store.runs.transition(s, fence, { from: ['running'], to: 'completed', output: 'hijacked' }, t0)],
    ['runs.wake', () => store.runs.wake(s, t0)],
    ['runs.requestCancel', () => store.runs.requestCancel(s, t0)],
    ['runs.delete', () => store.runs.delete(s)],
    // The optional batched delete (where the store has it), with the bad value as one of its ids.
    ...(store.runs.deleteMany === undefined
      ? []
      : ([['runs.deleteMany', () => store.runs.deleteMany!([s], { statuses: ['completed'], updatedBefore: t0 + 1_000_000 })]] as Array<
          [string, () => Promise<unknown>]
        >)),
    ...(store.runs.promiseWake === undefined
      ? []
      : ([['runs.promiseWake', () => store.runs.promiseWake!(s, t0 + 1_000, t0)]] as Array<[string, () => Promise<unknown>]>)),
    ...(store.runs.keepPromise === undefined ? [] : ([['runs.keepPromise', () => store.runs.keepPromise!(s, t0)]] as Array<[string, () => Promise<unknown>]>)),
    ['steps.load', () => store.steps.load(s)],
    ['steps.insert', () => store.steps.insert(s, fence, newStep(), t0)],
    ['steps.insert (key)', () => store.steps.insert(running, fence, newStep({ key: s }), t0)],
    [
      'steps.transition',
      () => store.steps.transition(s, fence, { key: 'charge', from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'x' } }, t0),
    ],
    [
      'steps.transition (key)',
      () => store.steps.transition(running, fence, { key: s, from: { status: ['running'], attempt: 1 }, to: { status: 'succeeded', output: 'x' } }, t0),
    ],
    ['state.set', () => store.state.set(s, fence, 'k', 'hijacked', t0)],
    ['state.set (key)', () => store.state.set(running, fence, s, 'hijacked', t0)],
    ['state.get', () => store.state.get(s)],
    ['events.deliver', () => store.events.deliver(s, 'go', 'hijacked', t0)],
    ['events.deliver (name)', () => store.events.deliver(running, s, 'hijacked', t0)],
    ['events.deliver (idempotencyKey)', () => store.events.deliver(running, 'go', 'hijacked', t0, { idempotencyKey: s })],
    ['events.get', () => store.events.get(s, 'go', 1)],
    ['events.get (name)', () => store.events.get(running, s, 1)],
    ['versions.upsert', () => store.versions.upsert(s, 'v1', null, t0)],
    ['versions.get', () => store.versions.get(s, 'v1')],
    ['versions.list', () => store.versions.list(s)],
    ['versions.setStatus', () => store.versions.setStatus('orders', s, 'retired', t0)],
    ['history.list', () => store.history.list(s)],
  ];
}

/** Store contract: arguments of the wrong runtime type, and composite keys that must not collide. */
export const hostileArgumentsStoreGroup: CaseGroup = caseGroup('store.arguments', 'store: hostile arguments and composite keys', [
  conformanceCase('a non-string where an id or name belongs is refused with INVALID_INPUT: never a match, never a TypeError', async ({ store, t0 }) => {
    const done = await terminalRun(store, t0, 'completed', { secret: true });
    const { run, fence } = await runningRun(store, t0);
    await store.steps.insert(run.id, fence, newStep(), t0);
    await store.state.set(run.id, fence, 'k', 'v', t0);
    await store.versions.upsert('orders', 'v1', null, t0);
    const before = [await snapshotRun(store, done.id, ['go']), await snapshotRun(store, run.id, ['go'])];
    const versionsBefore = await store.versions.list('orders');
    for (const bad of NOT_STRINGS) {
      for (const [what, call] of callsWith(store, bad, { running: run.id, fence }, t0 + 1)) {
        // A field that may be absent (the idempotency key, a list filter) is fine as `undefined`.
        if (bad === undefined && (what === 'runs.create (idempotencyKey)' || what === 'runs.list (workflow)' || what === 'events.deliver (idempotencyKey)'))
          continue;
        await rejectsWithCode(Promise.resolve().then(call), 'INVALID_INPUT', `${what} with ${show(bad)}`);
      }
    }
    // A fence that is not a number would bypass the fencing check in a naive filter.
    for (const bad of [{ $gte: 0 }, '1', Number.NaN]) {
      await rejectsWithCode(
        Promise.resolve().then(() => store.runs.renew(run.id, bad as number, 1_000, t0)),
        'INVALID_INPUT',
        `renew with fence ${show(bad)}`,
      );
      await rejectsWithCode(
        Promise.resolve().then(() => store.state.set(run.id, bad as number, 'k', 'hijacked', t0)),
        'INVALID_INPUT',
        `state.set with fence ${show(bad)}`,
      );
    }
    assert.deepEqual([await snapshotRun(store, done.id, ['go']), await snapshotRun(store, run.id, ['go'])], before, 'nothing changed');
    assert.deepEqual(await store.versions.list('orders'), versionsBefore);
    assert.equal((await store.runs.list({})).runs.length, 2, 'no run was created');
  }),

  conformanceCase('workflow + idempotency key pairs never collide, whatever separator a backend might use', async ({ store, t0 }) => {
    const pairs: Array<[string, string]> = [
      ['a\u0000b', 'c'],
      ['a', 'b\u0000c'],
      ['a:b', 'c'],
      ['a', 'b:c'],
      ['["a","b"]', 'c'],
      ['a', '"b"],["c'],
      ['a', 'b'],
    ];
    const ids = new Set<string>();
    for (const [workflow, idempotencyKey] of pairs) {
      const { run, created } = await store.runs.create(newRun({ workflow, idempotencyKey }), t0);
      assert.equal(created, true, `(${label(workflow)}, ${label(idempotencyKey)}) collided with an earlier pair`);
      ids.add(run.id);
    }
    for (const [workflow, idempotencyKey] of pairs) {
      const again = await store.runs.create(newRun({ workflow, idempotencyKey }), t0);
      assert.equal(again.created, false, `(${label(workflow)}, ${label(idempotencyKey)}) must be found again`);
      assert.equal(again.run.workflow, workflow);
      assert.equal(again.run.idempotencyKey, idempotencyKey);
    }
    assert.equal(ids.size, pairs.length);
    // Deleting one run frees its own pair only.
    const first = (await store.runs.create(newRun({ workflow: pairs[0]![0], idempotencyKey: pairs[0]![1] }), t0)).run;
    assert.equal(await store.runs.delete(first.id), true);
    assert.equal((await store.runs.create(newRun({ workflow: pairs[1]![0], idempotencyKey: pairs[1]![1] }), t0)).created, false);
    assert.equal((await store.runs.create(newRun({ workflow: pairs[0]![0], idempotencyKey: pairs[0]![1] }), t0)).created, true);
  }),

  conformanceCase('workflow + version pairs never collide', async ({ store, t0 }) => {
    const pairs: Array<[string, string]> = [
      ['a\u0000b', 'c'],
      ['a', 'b\u0000c'],
      ['a:b', 'c'],
      ['a', 'b:c'],
    ];
    for (const [i, [workflow, version]] of pairs.entries()) await store.versions.upsert(workflow, version, i, t0 + i);
    for (const [i, [workflow, version]] of pairs.entries()) {
      const found = await store.versions.get(workflow, version);
      assert.deepEqual([found?.workflow, found?.version, found?.descriptor], [workflow, version, i], `(${label(workflow)}, ${label(version)})`);
    }
    assert.deepEqual((await store.versions.list('a')).map((v) => v.version).sort(), ['b:c', 'b\u0000c'].sort());
    await store.versions.setStatus('a', 'b\u0000c', 'retired', t0 + 10);
    assert.equal((await store.versions.get('a\u0000b', 'c'))?.status, 'active', 'retiring one pair must not retire the other');
    // A run of another workflow never interferes either.
    await createRun(store, t0, { workflow: 'a' });
  }),
]);
