import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CairnError } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createKyselyStore, migrateToLatest } from '../../src/index.js';
import type { AnyDb } from './databases.js';
import { dropPrefix } from './harness.js';
import { freshPrefix, type Target } from './targets.js';

// What the store cases share: fixed times, a store on a fresh prefix of the target, a claimed run,
// a logged Kysely instance. Kept apart so each case file holds cases only.

/** A fixed clock reading the cases write at. */
export const T0 = 1_750_000_000_000;
/** The lease the cases claim runs with. */
export const LEASE = 30_000;
/** A fresh run id. */
export const id = (): string => randomUUID();

/** A promise opened from outside. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Asserts that `promise` rejects with a CairnError of `code`. */
export async function rejects(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => CairnError.is(error) && error.code === code);
}

/** One store on a fresh prefix of the target, with its own Kysely instance. */
export interface StoreContext {
  store: WorkflowStore;
  db: AnyDb;
  prefix: string;
  done(): Promise<void>;
}

/** Opens a store on a fresh, migrated prefix of the target. */
export async function openStore(target: Target): Promise<StoreContext> {
  const db = await target.open();
  const prefix = freshPrefix();
  await migrateToLatest(db, { tablePrefix: prefix });
  const store = createKyselyStore({ db, tablePrefix: prefix });
  return {
    store,
    db,
    prefix,
    async done() {
      try {
        await store.close();
        await dropPrefix(db, prefix);
      } finally {
        await db.destroy();
      }
    },
  };
}

/** A run created and claimed by `owner`. */
export async function runningRun(store: WorkflowStore, owner = 'w1') {
  const { run } = await store.runs.create({ id: id(), workflow: 'wf', version: 'v1', input: { n: 1 } }, T0);
  const claimed = await store.runs.claim(run.id, owner, LEASE, T0);
  assert.ok(claimed);
  return claimed;
}

/** A Kysely instance of its own on the target, and every statement it sends (Kysely's query log). */
export async function openLogged(target: Target): Promise<{ db: AnyDb; statements: string[] }> {
  const statements: string[] = [];
  const db = await target.open((event) => {
    if (event.level === 'query') statements.push(event.query.sql);
  });
  return { db, statements };
}
