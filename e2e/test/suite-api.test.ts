import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '@cairn/core';
import { allGroups, countingStore, memoryHarness, newNamespace, selectGroups, skipReason } from '../src/index.js';

describe('conformance suite API', () => {
  it('selectGroups matches ids by prefix at a dot boundary', () => {
    const ids = (only: string[]) => selectGroups(allGroups, only).map((g) => g.id);
    assert.deepEqual(ids(['store.runs']), ['store.runs']);
    assert.ok(ids(['store']).every((id) => id.startsWith('store.')));
    assert.ok(ids(['store']).length >= 6);
    assert.deepEqual(ids(['stor']), [], 'a partial word selects nothing');
    assert.equal(ids([]).length, allGroups.length);
  });

  it('every case has a unique name within its group, and group ids are unique', () => {
    assert.equal(new Set(allGroups.map((g) => g.id)).size, allGroups.length);
    for (const group of allGroups) {
      const names = group.cases.map((c) => c.name);
      assert.equal(new Set(names).size, names.length, `duplicate case names in ${group.id}`);
    }
  });

  it('skipReason names the missing capability', () => {
    const memory = memoryHarness();
    assert.match(skipReason(memory, ['multiProcess']) ?? '', /capability multiProcess absent/);
    assert.equal(skipReason(memory, ['artefactsOf']), undefined);
    assert.match(skipReason({ ...memory, artefactsOf: undefined }, ['artefactsOf']) ?? '', /artefactsOf absent/);
    assert.equal(skipReason({ ...memory, capabilities: {} }, ['multiProcess']), undefined, 'capabilities default to present');
  });

  it('newNamespace is short, safe as an identifier, and unique', () => {
    const names = Array.from({ length: 200 }, newNamespace);
    assert.equal(new Set(names).size, 200);
    for (const n of names) assert.match(n, /^[a-z][a-z0-9_]{0,23}$/);
  });

  it('countingStore counts calls per noun.method and run, and forwards them unchanged', async () => {
    const store = countingStore(createMemoryStore());
    const { run } = await store.runs.create({ id: '01900000-0000-7000-8000-000000000001', workflow: 'w', version: '1', input: null }, 1);
    await store.runs.claim(run.id, 'me', 1000, 2);
    await store.steps.load(run.id);
    await store.runs.get(run.id);
    assert.equal(store.count('runs.claim', run.id), 1);
    assert.equal(store.count('steps.load'), 1);
    assert.deepEqual(
      store.writes(run.id).map((c) => c.method),
      ['runs.claim'],
    );
    assert.deepEqual(store.counts(), { 'runs.create': 1, 'runs.claim': 1, 'steps.load': 1, 'runs.get': 1 });
    assert.equal(store.inflight, 0);
    assert.equal((await store.runs.get(run.id))?.status, 'running');
    store.reset();
    assert.deepEqual(store.calls, []);
  });
});
