import type { ColumnKind } from '../schema/column-types.js';
import type { RoutineParam } from '../routines/params.js';

// The pieces every MySQL/MariaDB procedure of the store is built from, in their own file so the
// step, run and slot procedures share them without importing each other.

/**
 * Parameter types. Text parameters carry the tables' own character set and collation: a routine
 * parameter is as "implicit" as a column, so comparing a column with a parameter of another
 * collation would fail with "Illegal mix of collations".
 */
function mysqlParamType(kind: ColumnKind, collation: string): string {
  const text = `character set utf8mb4 collate ${collation}`;
  switch (kind) {
    case 'id':
      return `varchar(128) ${text}`;
    case 'name':
      return `varchar(255) ${text}`;
    case 'short':
      return `varchar(16) ${text}`;
    case 'hash':
      return 'char(64) character set ascii collate ascii_bin';
    case 'text':
    case 'ordered':
      return `text ${text}`;
    case 'json':
      return `longtext ${text}`;
    case 'bigint':
      return 'bigint';
    case 'int':
      return 'integer';
    case 'flag':
      return 'smallint';
  }
}

/**
 * The head of a procedure up to its `begin`: it modifies data and runs with the caller's
 * privileges (`SQL SECURITY INVOKER`), as the PL/pgSQL functions do.
 */
export function procedureHead(name: string, params: readonly RoutineParam[], collation: string): string {
  return `create procedure \`${name}\`(${signature(params, collation)})
modifies sql data
sql security invoker
begin`;
}

/** `in p_x type, ...` for a procedure's parameter list. */
function signature(params: readonly RoutineParam[], collation: string): string {
  return params.map(([name, kind]) => `in ${name} ${mysqlParamType(kind, collation)}`).join(', ');
}

/**
 * Declares `v_done` and opens the procedure's transaction: any SQL error rolls it back and is
 * raised again to the caller (a deadlock victim then reaches the store's retry whole).
 */
export const BEGIN_TRANSACTION = `declare v_done integer default 0;
  declare exit handler for sqlexception
  begin
    rollback;
    resignal;
  end;
  start transaction;`;

/** The terminal run statuses as a SQL list. */
export const TERMINAL = `('completed', 'failed', 'cancelled')`;
