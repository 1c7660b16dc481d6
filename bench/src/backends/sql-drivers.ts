/**
 * Kysely instances whose drivers count every request they send to the server. The counting sits
 * below Kysely, on the driver objects themselves, so BEGIN/COMMIT and anything Kysely issues on
 * its own count too:
 *   - pg: every `client.query` of every pooled client (patched as the pool connects it);
 *   - mysql2: every `query`/`execute` of every pooled connection;
 *   - better-sqlite3: every execution (`run`/`all`/`get`/`iterate`) of every prepared statement.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import type { RoundTripCounter } from '../instrument/round-trips.js';

// biome-ignore lint/suspicious/noExplicitAny: the bench queries the store's tables, whose database interface Kysely is never given
export type AnyDb = Kysely<any>;

function text(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && typeof (arg as { text?: unknown }).text === 'string') return (arg as { text: string }).text;
  if (arg && typeof arg === 'object' && typeof (arg as { sql?: unknown }).sql === 'string') return (arg as { sql: string }).sql;
  return undefined;
}

/**
 * Whether a pg request asks for an asynchronous commit: a statement that sets
 * `synchronous_commit` off itself, or a call of the store's `step_insert` (or `step_insert_v2`) function whose last
 * argument (`p_async`) is 1 — the function then sets it for its own transaction.
 */
function asksForAsyncCommit(statement: string | undefined, values: unknown): boolean {
  if (statement === undefined) return false;
  if (/synchronous_commit/i.test(statement) && /\boff\b/i.test(statement)) return true;
  return /step_insert(_v2)?"?\(/.test(statement) && Array.isArray(values) && Number(values[values.length - 1]) === 1;
}

/** PostgreSQL through `pg`; `counter` undefined = uncounted. */
export async function postgresDb(url: string, counter?: RoundTripCounter, max = 10): Promise<AnyDb> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  // A checked-out connection ending (a scenario stopped by its time limit while the server stops)
  // must not be an uncaught error either.
  pool.on('connect', (client) => client.on('error', () => {}));
  if (counter) {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        counter.hit(text(args[0]), asksForAsyncCommit(text(args[0]), args[1]));
        return query(...args);
      };
    });
  }
  return new Kysely({ dialect: new PostgresDialect({ pool }) });
}

/** MySQL/MariaDB through `mysql2` (callback pool, as Kysely wants it). */
export async function mysqlDb(url: string, counter?: RoundTripCounter, connectionLimit = 10): Promise<AnyDb> {
  const mysql = await import('mysql2');
  const pool = mysql.createPool({ uri: url, connectionLimit });
  if (counter) {
    pool.on('connection', (connection) => {
      for (const method of ['query', 'execute'] as const) {
        const original = (connection as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!.bind(connection);
        (connection as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          counter.hit(text(args[0]));
          return original(...args);
        };
      }
    });
  }
  return new Kysely({ dialect: new MysqlDialect({ pool }) });
}

const EXECUTIONS = new Set(['run', 'all', 'get', 'iterate']);

/** SQLite through better-sqlite3, configured like `openSqliteStore` (WAL, synchronous = NORMAL). */
export async function sqliteDb(filename: string, counter?: RoundTripCounter): Promise<AnyDb> {
  const { default: Database } = await import('better-sqlite3');
  const database: BetterSqlite3.Database = new Database(filename);
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  if (counter) {
    const prepare = database.prepare.bind(database);
    database.prepare = ((source: string) => {
      const statement = prepare(source);
      return new Proxy(statement, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target) as unknown;
          if (typeof value !== 'function') return value;
          if (typeof prop === 'string' && EXECUTIONS.has(prop)) {
            return (...args: unknown[]) => {
              counter.hit(source);
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return (value as (...a: unknown[]) => unknown).bind(target);
        },
      });
    }) as typeof database.prepare;
  }
  return new Kysely({ dialect: new SqliteDialect({ database }) });
}
