import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CliError } from '../../cli-error.js';
import { EXIT } from '../../exit-codes.js';
import type { UrlBackend } from '../backend.js';
import { importBackend } from '../backend.js';

/** The file a `sqlite:` URL names: `sqlite:relative/path`, `sqlite:/abs/path`, `sqlite:///abs/path`. */
export function sqlitePath(url: string): string {
  const rest = url.slice('sqlite:'.length);
  if (rest.startsWith('//')) return fileURLToPath(`file:${rest}`);
  return decodeURIComponent(rest);
}

/** `sqlite:<path>`: `openSqliteStore` of `@cairn/kysely` over `better-sqlite3`. */
export const sqliteBackend: UrlBackend = {
  title: 'SQLite',
  schemes: ['sqlite:'],
  packages: '@cairn/kysely kysely better-sqlite3',
  async open(url, options) {
    const path = sqlitePath(url);
    // Opening a missing file would create an empty database: a typo must not do that.
    if (path === '' || !existsSync(path)) throw new CliError(EXIT.usage, `No SQLite database at ${JSON.stringify(path)} (from --url ${JSON.stringify(url)})`);
    const { openSqliteStore } = await importBackend(this, () => import('@cairn/kysely'));
    return openSqliteStore(path, { migrate: false, ...(options.prefix === undefined ? {} : { tablePrefix: options.prefix }) });
  },
};
