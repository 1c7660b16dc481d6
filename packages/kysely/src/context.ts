import { sql, type QueryResult, type RawBuilder } from 'kysely';
import { callDriver, checkWritableRun } from '@cairn/core/backend';
import type { AnyKysely, SqlDialect } from './dialect/types.js';
import { TERMINAL, type TableName, type TableNames } from './schema/tables.js';

/** Everything the store's nouns share: the Kysely instance, the dialect and the table names. */
export interface StoreContext {
  readonly db: AnyKysely;
  readonly dialect: SqlDialect;
  /** Physical table names. */
  readonly names: TableNames;
  /** Table identifiers for `sql` templates. */
  readonly t: Readonly<Record<TableName, RawBuilder<unknown>>>;
  /** PostgreSQL: commit the start write of an inline step without waiting for the WAL flush. */
  readonly asyncStartCommit: boolean;
  /** PostgreSQL: step writes that wait for a statement slot go out together (`KyselyStoreOptions.groupCommit`). */
  readonly groupCommit: boolean;
  /** PostgreSQL: group commit statements one step write line keeps in flight (`KyselyStoreOptions.groupCommitStatements`). */
  readonly groupCommitStatements: number;
  /** The SQL of a routine call as sent: as it is, or as a named statement (`preparedStatements`). */
  readonly routineSql: (text: string) => string;
  /**
   * The connection refused a named statement (`SqlDialect.lostNamedStatement`): from now on this
   * store sends its routine calls unnamed, and says so once with a process warning. Returns false
   * when it already did (or never sent named statements): nothing changed, no second warning.
   */
  readonly dropNamedStatements: (cause: unknown) => boolean;
}

/** `KyselyStoreOptions.groupCommitStatements` when not given. */
export const DEFAULT_GROUP_COMMIT_STATEMENTS = 8;

/** Builds the context of one store. */
export function createContext(
  db: AnyKysely,
  dialect: SqlDialect,
  names: TableNames,
  asyncStartCommit: boolean,
  preparedStatements = false,
  groupCommit = true,
  groupCommitStatements = DEFAULT_GROUP_COMMIT_STATEMENTS,
): StoreContext {
  let named = preparedStatements ? dialect.namedStatement : undefined;
  // A routine call's text is one of a few fixed texts: its named statement (a SHA-256 of the text)
  // is made once per text, not on every call. `pg` copies the query object it is given.
  const made = new Map<string, string>();
  const statementOf = (name: (text: string) => string, text: string): string => {
    let statement = made.get(text);
    if (statement === undefined) {
      statement = name(text);
      made.set(text, statement);
    }
    return statement;
  };
  return {
    db,
    dialect,
    names,
    asyncStartCommit,
    groupCommit,
    groupCommitStatements,
    routineSql: (text) => (named === undefined ? text : statementOf(named, text)),
    dropNamedStatements: (cause) => {
      if (named === undefined) return false;
      named = undefined;
      // A warning, not an error: every call still works, only the parse-once saving is gone.
      process.emitWarning(
        `Cairn's store sends its step and run routine calls unnamed from now on: the database connection did not keep a named (prepared) statement (${String((cause as Error)?.message ?? cause)}), as behind a pooler in transaction mode that does not track them (PgBouncer before 1.21). Pass preparedStatements: false to the store to send them unnamed from the start.`,
        { type: 'CairnWarning', code: 'CAIRN_NAMED_STATEMENTS_DROPPED' },
      );
      return true;
    },
    t: {
      runs: sql.table(names.runs),
      steps: sql.table(names.steps),
      attempts: sql.table(names.attempts),
      state: sql.table(names.state),
      events: sql.table(names.events),
      versions: sql.table(names.versions),
      schedules: sql.table(names.schedules),
      slots: sql.table(names.slots),
      slot_waiters: sql.table(names.slot_waiters),
      stream_entries: sql.table(names.stream_entries),
      pauses: sql.table(names.pauses),
      bulk_operations: sql.table(names.bulk_operations),
      run_tags: sql.table(names.run_tags),
    },
  };
}

/** The terminal statuses as a SQL list literal: `('completed','failed','cancelled')`. */
export const TERMINAL_SQL = sql.raw(`(${TERMINAL.map((s) => `'${s}'`).join(',')})`);

/** A list of values as a parenthesised SQL parameter list. */
export function inList(values: readonly (string | number)[]): RawBuilder<unknown> {
  return sql`(${sql.join(values.map((v) => sql`${v}`))})`;
}

/** Rows of a query. */
export async function rows<R>(executor: AnyKysely, query: RawBuilder<R>): Promise<R[]> {
  const result: QueryResult<R> = await query.execute(executor);
  return result.rows;
}

/** The first row of a query, or undefined. */
export async function first<R>(executor: AnyKysely, query: RawBuilder<R>): Promise<R | undefined> {
  return (await rows(executor, query))[0];
}

/**
 * Runs an `INSERT … ON CONFLICT DO NOTHING` (`dialect.onConflictDoNothing()`) and says whether it inserted: false when the key
 * existed (MySQL has no ON CONFLICT DO NOTHING: its duplicate key error says so).
 */
export async function insertedOnce(ctx: StoreContext, insert: RawBuilder<unknown>): Promise<boolean> {
  try {
    return (await affected(ctx.db, insert)) > 0;
  } catch (error) {
    if (!ctx.dialect.isDuplicateKey(error)) throw error;
    return false;
  }
}

/** How many rows a write matched (MySQL: mysql2 reports found rows, not changed rows). */
export async function affected(executor: AnyKysely, query: RawBuilder<unknown>): Promise<number> {
  const result = await query.execute(executor);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Runs one store operation: Cairn errors pass through, any other failure (a driver error, a lost
 * connection) becomes `STORE_ERROR` with the original as `cause`. Raw driver errors never leak.
 */
export async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  return callDriver('STORE_ERROR', operation, fn);
}

// The write rejections every backend raises, built once in @cairn/core/backend.
export { runNotFound, leaseLost, runConflict } from '@cairn/core/backend';

/**
 * The checks every write of an executing run makes, in the reference order: the run exists, the
 * fence (when numeric) is current, the run is not terminal. Throws the matching error.
 */
export function checkWritable(runId: string, fence: number | null, run: { fence: unknown; status: unknown } | undefined): void {
  // Rows hold the fence as a BIGINT (a string on some drivers) and the status as text.
  checkWritableRun(runId, fence, run === undefined ? undefined : { fence: Number(run.fence), status: String(run.status) });
}
