/**
 * Whether a driver error says a table lacks `column`: PostgreSQL undefined_column, MySQL/MariaDB
 * ER_BAD_FIELD_ERROR, SQLite "no such column" / "has no column named" (SQLite has no error code for it).
 */
export function lacksColumn(error: unknown, column: string): boolean {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (!new RegExp(`\\b${column}\\b`).test(message)) return false;
  return e?.code === '42703' || e?.errno === 1054 || message.includes(`no such column: ${column}`) || message.includes(`no column named ${column}`);
}
