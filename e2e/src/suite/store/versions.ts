import assert from 'node:assert/strict';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { assertSameRecord, rejectsWithCode } from '../fixtures/assertions.js';

/** Store contract: `versions`. */
export const versionsGroup: CaseGroup = caseGroup('store.versions', 'store: versions', [
  conformanceCase('upsert: inserts an active version', async ({ store, t0 }) => {
    const record = await store.versions.upsert('orders', 'v1', { retries: 3, tags: ['a'] }, t0);
    const expected = { workflow: 'orders', version: 'v1', status: 'active', descriptor: { retries: 3, tags: ['a'] }, createdAt: t0, updatedAt: t0 };
    assertSameRecord(record, expected);
    assertSameRecord(await store.versions.get('orders', 'v1'), expected);
  }),

  conformanceCase('upsert: an existing version gets the new descriptor, keeping its status and createdAt', async ({ store, t0 }) => {
    await store.versions.upsert('orders', 'v1', { retries: 3 }, t0);
    await store.versions.setStatus('orders', 'v1', 'retired', t0 + 1);
    const updated = await store.versions.upsert('orders', 'v1', { retries: 5 }, t0 + 2);
    const expected = { workflow: 'orders', version: 'v1', status: 'retired', descriptor: { retries: 5 }, createdAt: t0, updatedAt: t0 + 2 };
    assertSameRecord(updated, expected);
    assertSameRecord(await store.versions.get('orders', 'v1'), expected);
    assert.equal((await store.versions.list('orders')).length, 1);
  }),

  conformanceCase('upsert: concurrent registrations of one version leave one record', async ({ store, t0 }) => {
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.versions.upsert('orders', 'v1', { i }, t0)));
    const all = await store.versions.list('orders');
    assert.equal(all.length, 1);
    assert.equal(all[0]?.status, 'active');
  }),

  conformanceCase('get: a missing version is undefined', async ({ store, t0 }) => {
    await store.versions.upsert('orders', 'v1', null, t0);
    assert.equal(await store.versions.get('orders', 'v2'), undefined);
    assert.equal(await store.versions.get('refunds', 'v1'), undefined);
  }),

  conformanceCase('list: one workflow only, oldest createdAt first', async ({ store, t0 }) => {
    await store.versions.upsert('orders', 'b', 1, t0 + 20);
    await store.versions.upsert('orders', 'c', 2, t0);
    await store.versions.upsert('refunds', 'x', 3, t0 + 5);
    await store.versions.upsert('orders', 'a', 4, t0 + 10);
    assert.deepEqual(
      (await store.versions.list('orders')).map((v) => v.version),
      ['c', 'a', 'b'],
    );
    assert.deepEqual(await store.versions.list('nobody'), []);
  }),

  conformanceCase('(workflow, version) pairs that concatenate alike stay distinct', async ({ store, t0 }) => {
    await store.versions.upsert('a', 'b:c', 'first', t0);
    await store.versions.upsert('a:b', 'c', 'second', t0);
    assert.equal((await store.versions.get('a', 'b:c'))?.descriptor, 'first');
    assert.equal((await store.versions.get('a:b', 'c'))?.descriptor, 'second');
  }),

  conformanceCase('setStatus: sets and returns the status', async ({ store, t0 }) => {
    await store.versions.upsert('orders', 'v1', {}, t0);
    const retired = await store.versions.setStatus('orders', 'v1', 'retired', t0 + 1);
    assert.deepEqual([retired.status, retired.updatedAt, retired.createdAt], ['retired', t0 + 1, t0]);
    assert.equal((await store.versions.get('orders', 'v1'))?.status, 'retired');
    const active = await store.versions.setStatus('orders', 'v1', 'active', t0 + 2);
    assert.equal(active.status, 'active');
    assert.equal((await store.versions.list('orders'))[0]?.status, 'active');
  }),

  conformanceCase('setStatus: an unregistered version is VERSION_NOT_FOUND and creates nothing', async ({ store, t0 }) => {
    await rejectsWithCode(store.versions.setStatus('orders', 'v9', 'retired', t0), 'VERSION_NOT_FOUND');
    assert.deepEqual(await store.versions.list('orders'), []);
  }),
]);
