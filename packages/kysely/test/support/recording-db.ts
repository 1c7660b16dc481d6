import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { SqlDialectName } from '../../src/index.js';
import type { AnyDb } from './databases.js';

/** One statement a Kysely instance sent: its SQL text and parameters, as Kysely compiled them. */
export interface RecordedQuery {
  sql: string;
  parameters: readonly unknown[];
}

/** What the recording database answers to the few reads migrations make. */
export interface RecordingAnswers {
  /** `select version()`: MariaDB's or MySQL's version string (it picks the collation). */
  version?: string;
  /** `information_schema` probes (has column, has index): whether the column or index is there. */
  present?: boolean;
}

/**
 * A Kysely instance of `dialect` (Kysely's own adapter and query compiler, so the text is what a real
 * driver would be sent) whose driver records every compiled query instead of sending it. Reads
 * answer as `answers` says; everything else returns no rows.
 */
export function recordingDb(dialect: SqlDialectName, answers: () => RecordingAnswers): { db: AnyDb; queries: RecordedQuery[] } {
  const queries: RecordedQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      queries.push({ sql: query.sql, parameters: query.parameters });
      return { rows: answer(query.sql, answers()) as R[] };
    },
    // biome-ignore lint/correctness/useYield: no migration streams; the interface requires the member
    streamQuery: async function* () {
      throw new Error('the recording database does not stream');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const parts: Record<SqlDialectName, Omit<Dialect, 'createDriver'>> = {
    postgres: {
      createAdapter: () => new PostgresAdapter(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    mysql: {
      createAdapter: () => new MysqlAdapter(),
      createIntrospector: (db) => new MysqlIntrospector(db),
      createQueryCompiler: () => new MysqlQueryCompiler(),
    },
    sqlite: {
      createAdapter: () => new SqliteAdapter(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  };
  return { db: new Kysely({ dialect: { ...parts[dialect], createDriver: () => driver } }), queries };
}

function answer(text: string, answers: RecordingAnswers): unknown[] {
  if (/^select version\(\)/.test(text)) return [{ v: answers.version ?? '' }];
  if (/from information_schema\./.test(text)) return [{ n: answers.present ? 1 : 0 }];
  return [];
}
