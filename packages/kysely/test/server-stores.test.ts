/**
 * openPostgresStore / openMysqlStore on a real server: they migrate on open (unless told not to),
 * work, survive their connections being terminated by the server, and close their pool. With
 * `migrate: false` they open without touching the server, and a call while it is unreachable is a
 * STORE_ERROR.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import mysqlPromise from 'mysql2/promise';
import { CairnError, type RunRecord } from '@cairn/core';
import { createMysqlDatabase, createPostgresDatabase, stopSharedServices } from '@cairn/conformance/services';
import { openMysqlStore } from '@cairn/kysely/mysql';
import { openPostgresStore } from '@cairn/kysely/postgres';
import { mysqlServer, postgresServer, type SqlServer } from './support/servers.js';

after(() => stopSharedServices());

/** Ends every other connection to the database (what a server restart does to a pool). */
async function terminateOthers(dialect: 'postgres' | 'mysql', url: string): Promise<number> {
  if (dialect === 'postgres') {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const r = await admin.query(
        'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      return r.rows[0].n as number;
    } finally {
      await admin.end();
    }
  }
  const admin = await mysqlPromise.createConnection(url);
  try {
    const [rows] = await admin.query<mysqlPromise.RowDataPacket[]>(
      'select id from information_schema.processlist where db = database() and id <> connection_id()',
    );
    for (const row of rows) await admin.query(`KILL CONNECTION ${Number(row.id)}`);
    return rows.length;
  } finally {
    await admin.end();
  }
}

for (const [dialect, server] of [
  ['postgres', await postgresServer()],
  ['mysql', await mysqlServer()],
] as ['postgres' | 'mysql', SqlServer][]) {
  const open = dialect === 'postgres' ? openPostgresStore : openMysqlStore;
  const fresh = dialect === 'postgres' ? createPostgresDatabase : createMysqlDatabase;
  describe(`open${dialect === 'postgres' ? 'Postgres' : 'Mysql'}Store`, { skip: server.skip }, () => {
    it('migrates on open, works, and keeps working after the server ends its connections', { timeout: 60_000 }, async () => {
      const url = await fresh((server as { url: string }).url);
      const store = await open(url);
      try {
        const id = randomUUID();
        await store.runs.create({ id, workflow: 'wf', version: '1', input: { n: 1 } }, 1000);
        assert.ok((await terminateOthers(dialect, url)) >= 1);
        // A call may meet a connection the server just ended (STORE_ERROR); the pool then opens new ones.
        let run: RunRecord | undefined;
        for (let i = 0; i < 3 && run === undefined; i++) {
          run = await store.runs.get(id).catch((error: unknown) => {
            assert.ok(CairnError.is(error, 'STORE_ERROR'), String(error));
            return undefined;
          });
        }
        assert.equal(run?.id, id);
      } finally {
        await store.close();
      }
    });

    it('with migrate: false opens without the server; calls fail with STORE_ERROR while it is unreachable', { timeout: 60_000 }, async () => {
      const store = await open(dialect === 'postgres' ? 'postgres://nobody@127.0.0.1:1/none' : 'mysql://nobody@127.0.0.1:1/none', { migrate: false });
      try {
        await assert.rejects(store.runs.get(randomUUID()), (error: unknown) => CairnError.is(error, 'STORE_ERROR'));
      } finally {
        await store.close();
      }
    });
  });
}

describe('openPostgresStore: named statements', async () => {
  const server = await postgresServer();
  /** A `pg` Client that records the name of every named statement it sends. */
  const recording = () => {
    const names: string[] = [];
    class RecordingClient extends pg.Client {
      override query(...args: unknown[]): never {
        const first = args[0] as { name?: unknown } | string | undefined;
        if (typeof first === 'object' && first !== null && typeof first.name === 'string') names.push(first.name);
        return (super.query as (...a: unknown[]) => never)(...args);
      }
    }
    return { names, Client: RecordingClient };
  };
  const stepWrite = async (store: Awaited<ReturnType<typeof openPostgresStore>>) => {
    const id = randomUUID();
    await store.runs.create({ id, workflow: 'wf', version: '1', input: null }, 1000);
    const run = await store.runs.claim(id, 'w', 60_000, 1000);
    assert.ok(run);
    await store.steps.insert(id, run.fence, { key: 'a', name: 'a', kind: 'task', seq: 0, status: 'running', maxAttempts: 1, worker: 'w' }, 1000);
  };

  it('sends the step writes as named statements by default, unnamed with preparedStatements: false', { skip: server.skip, timeout: 60_000 }, async () => {
    const url = await createPostgresDatabase((server as { url: string }).url);
    for (const [options, named] of [
      [{}, true],
      [{ preparedStatements: false }, false],
    ] as const) {
      const { names, Client } = recording();
      const store = await openPostgresStore({ connectionString: url, Client }, options);
      try {
        await stepWrite(store);
      } finally {
        await store.close();
      }
      assert.equal(
        names.some((n) => n.startsWith('cairn_')),
        named,
        `${JSON.stringify(options)}: named statements sent: ${names.join(', ') || 'none'}`,
      );
    }
  });
});
