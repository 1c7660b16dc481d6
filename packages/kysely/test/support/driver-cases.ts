import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { CairnError } from '@cairn/core';
import { createKyselyStore } from '../../src/index.js';
import { dialectOf } from '../../src/dialect/detect.js';
import type { AnyDb } from './databases.js';
import { id, gate, type StoreContext } from './store-case-kit.js';
import type { Target } from './targets.js';

/**
 * What the driver and the server do to a write: a deadlock victim rolled back and run again, and
 * driver failures surfacing as STORE_ERROR. Registered inside `storeCases`.
 */
export function driverCases(target: Target, ctx: StoreContext): void {
  it('a deadlock victim is rolled back by the server and run again: both crossing transactions commit', {
    skip: target.dialect === 'sqlite' && 'SQLite writers queue on one lock; they cannot deadlock',
  }, async () => {
    // Two transactions lock two rows in opposite orders; on their first tries each waits for the
    // other to hold its first row, so the server must pick a victim (MySQL 1213, PostgreSQL
    // 40P01) and roll it back whole. The dialect's transaction runs the victim again.
    const table = sql.table(`${ctx.prefix}crossing`);
    await sql`create table ${table} (id integer primary key, v integer not null)`.execute(ctx.db);
    await sql`insert into ${table} (id, v) values (1, 0), (2, 0)`.execute(ctx.db);
    const dialect = dialectOf(target.dialect);
    const peers = await Promise.all([target.open(), target.open()]);
    const holding = [gate(), gate()];
    let tries = 0;
    const crossing = (db: AnyDb, mine: 0 | 1) =>
      dialect.transaction(db, async (trx) => {
        const first = tries++ < 2;
        await sql`update ${table} set v = v + 1 where id = ${mine + 1}`.execute(trx);
        if (first) {
          holding[mine]!.open();
          await holding[1 - mine]!.promise;
        }
        await sql`update ${table} set v = v + 1 where id = ${2 - mine}`.execute(trx);
      });
    try {
      await Promise.all([crossing(peers[0]!, 0), crossing(peers[1]!, 1)]);
      const { rows: found } = await sql<{ id: number; v: number }>`select id, v from ${table} order by id`.execute(ctx.db);
      assert.deepEqual(
        found.map((r) => [Number(r.id), Number(r.v)]),
        [
          [1, 2],
          [2, 2],
        ],
        'each transaction applied once',
      );
      assert.equal(tries, 3, 'one victim, run once more');
    } finally {
      for (const db of peers) await db.destroy();
      await sql`drop table ${table}`.execute(ctx.db);
    }
  });

  it('driver failures surface as STORE_ERROR with the driver error as cause', async () => {
    const broken = createKyselyStore({ db: ctx.db, tablePrefix: 'no_such_tables_' });
    await assert.rejects(broken.runs.get(id()), (error: unknown) => CairnError.is(error, 'STORE_ERROR') && (error as Error).cause !== undefined);
  });
}
