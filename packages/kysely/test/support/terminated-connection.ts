/**
 * Child process of connection-guards.test.ts: checks a connection out of a pool, has the server
 * terminate it (pg_terminate_backend / KILL CONNECTION) while it is checked out, waits, and exits 0
 * if the process is still alive. `bare` leaves the pool as the driver makes it; `guarded` applies
 * guardPostgresPool / guardMysqlPool first.
 *
 *   node --import tsx --conditions=@cairn/source terminated-connection.ts postgres|mysql URL bare|guarded
 */
import pg from 'pg';
import mysql from 'mysql2';
import mysqlPromise from 'mysql2/promise';
import { guardMysqlPool } from '@cairn/kysely/mysql';
import { guardPostgresPool } from '@cairn/kysely/postgres';

const [dialect, url, mode] = process.argv.slice(2) as ['postgres' | 'mysql', string, 'bare' | 'guarded'];
const caught: unknown[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (dialect === 'postgres') {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  if (mode === 'guarded') guardPostgresPool(pool, (error) => caught.push(error));
  const client = await pool.connect();
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('select pg_terminate_backend($1)', [pid]);
  await admin.end();
  await sleep(500);
  client.release(true);
  // The pool opens a new connection for the next query.
  await pool.query('select 1');
  await pool.end();
} else {
  const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
  if (mode === 'guarded') guardMysqlPool(pool, (error) => caught.push(error));
  const connection = await new Promise<mysql.PoolConnection>((resolve, reject) => pool.getConnection((error, c) => (error ? reject(error) : resolve(c))));
  const admin = await mysqlPromise.createConnection(url);
  await admin.query(`KILL CONNECTION ${connection.threadId}`);
  await admin.end();
  await sleep(500);
  connection.release();
  await pool.promise().query('select 1');
  await new Promise<void>((resolve) => pool.end(() => resolve()));
}
console.log(JSON.stringify({ alive: true, caught: caught.map((e) => String((e as { code?: unknown }).code ?? (e as Error).message)) }));
