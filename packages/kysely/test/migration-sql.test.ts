import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CAIRN_MIGRATION_NAMES, cairnMigrations, type SqlDialectName } from '../src/index.js';
import { type RecordingAnswers, recordingDb } from './support/recording-db.js';

// Every statement each migration sends, up and down, on every dialect, compared with a committed
// snapshot (test/snapshots/migration-sql/<case>.sql). Shipped migrations are frozen (decision 21):
// moving code around must leave these texts byte for byte as they are. A new migration has no
// section yet: `CAIRN_RECORD_MIGRATION_SQL=1` appends the missing sections and never rewrites an
// existing one (changing a shipped section takes deleting it by hand, in plain sight of review).
const SNAPSHOTS = join(dirname(fileURLToPath(import.meta.url)), 'snapshots/migration-sql');
const RECORD = process.env.CAIRN_RECORD_MIGRATION_SQL === '1';

const MARIADB = '10.11.11-MariaDB-0+deb12u1';
const MYSQL = '8.0.40';

interface Case {
  file: string;
  dialect: SqlDialectName;
  /** The answers while migrating up, then down. */
  up: RecordingAnswers;
  down: RecordingAnswers;
}

// MySQL/MariaDB probe information_schema before each ALTER (their DDL commits statement by
// statement): a clean run finds nothing going up and everything going down; a run after a try that
// failed half-way finds the opposite, which `-retried` records.
const CASES: readonly Case[] = [
  { file: 'postgres', dialect: 'postgres', up: {}, down: {} },
  { file: 'sqlite', dialect: 'sqlite', up: {}, down: {} },
  { file: 'mariadb', dialect: 'mysql', up: { version: MARIADB, present: false }, down: { version: MARIADB, present: true } },
  { file: 'mariadb-retried', dialect: 'mysql', up: { version: MARIADB, present: true }, down: { version: MARIADB, present: false } },
  { file: 'mysql', dialect: 'mysql', up: { version: MYSQL, present: false }, down: { version: MYSQL, present: true } },
];

const HEADER = /^-- @migration (\S+ (?:up|down))$/m;

/** Every migration's statements, up in order then down in reverse, as sections keyed `<name> <up|down>`. */
async function render(c: Case): Promise<Map<string, string>> {
  let answers = c.up;
  const { db, queries } = recordingDb(c.dialect, () => answers);
  const migrations = await cairnMigrations().getMigrations();
  const sections = new Map<string, string>();
  const run = async (name: string, direction: 'up' | 'down') => {
    queries.length = 0;
    const migration = migrations[name];
    assert.ok(migration, `${name} is in cairnMigrations()`);
    await (direction === 'up' ? migration.up(db) : migration.down?.(db));
    const text = queries.map((q) => `-- @query${q.parameters.length > 0 ? ` ${JSON.stringify(q.parameters)}` : ''}\n${q.sql}\n`).join('');
    sections.set(`${name} ${direction}`, text);
  };
  for (const name of CAIRN_MIGRATION_NAMES) await run(name, 'up');
  answers = c.down;
  for (const name of [...CAIRN_MIGRATION_NAMES].reverse()) await run(name, 'down');
  await db.destroy();
  return sections;
}

function parse(text: string): Map<string, string> {
  const parts = text.split(HEADER);
  const sections = new Map<string, string>();
  for (let i = 1; i < parts.length; i += 2) sections.set(parts[i] as string, (parts[i + 1] as string).replace(/^\n/, ''));
  return sections;
}

const format = (sections: Map<string, string>): string => [...sections].map(([key, body]) => `-- @migration ${key}\n${body}`).join('');

describe('the SQL every migration sends is unchanged', () => {
  for (const c of CASES) {
    it(`${c.file}: every migration, up and down`, async () => {
      const path = join(SNAPSHOTS, `${c.file}.sql`);
      const stored = existsSync(path) ? parse(readFileSync(path, 'utf8')) : new Map<string, string>();
      const current = await render(c);
      for (const [key, body] of stored) assert.equal(current.get(key), body, `${c.file}: ${key} sends other statements than its snapshot`);
      const missing = [...current.keys()].filter((key) => !stored.has(key));
      if (RECORD && missing.length > 0) {
        for (const key of missing) stored.set(key, current.get(key) as string);
        writeFileSync(path, format(stored));
        return;
      }
      assert.deepEqual(missing, [], `${c.file}: no snapshot of these yet; record them with CAIRN_RECORD_MIGRATION_SQL=1`);
    });
  }
});
