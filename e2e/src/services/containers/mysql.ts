import type { BackendContainer } from './common.js';

/**
 * MariaDB through `@testcontainers/mariadb`, as on the official image: the module's MARIADB_*
 * environment and port wait; a database `cairn`, used as root so that tests can create their own.
 * Server options as for the local test server (no flush per commit: the data is thrown away).
 */
export const mysqlContainer: BackendContainer = {
  async start(image, timeoutMs) {
    const { MariaDbContainer } = await import('@testcontainers/mariadb');
    const c = await new MariaDbContainer(image)
      .withDatabase('cairn')
      .withCommand(['--character-set-server=utf8mb4', '--innodb-flush-log-at-trx-commit=0', '--innodb-doublewrite=0', '--max-connections=200'])
      .withStartupTimeout(timeoutMs)
      .start();
    // The module names the scheme mariadb://; the project's URLs for this backend are mysql://.
    return { url: c.getConnectionUri(true).replace(/^mariadb:/, 'mysql:'), id: c.getId().slice(0, 12), stop: async () => void (await c.stop()) };
  },
  async describe(url) {
    const mysql = await import('mysql2/promise');
    const conn = await mysql.createConnection({ uri: url, connectTimeout: 5000 });
    try {
      const [rows] = await conn.query<Array<{ v: string } & import('mysql2').RowDataPacket>>('SELECT VERSION() AS v');
      const version = rows[0]?.v ?? 'unknown';
      return { version, label: /mariadb/i.test(version) ? `MariaDB ${version.split('-')[0]}` : `MySQL ${version}` };
    } finally {
      await conn.end();
    }
  },
};
