import type { BackendContainer } from './common.js';

/**
 * PostgreSQL through `@testcontainers/postgresql`, as on the official image: the module's
 * POSTGRES_* environment, its pg_isready health check and port wait. The server options are those
 * of the local test server (initdb --no-sync, no fsync: the data is thrown away; room for the suite's connections).
 */
export const postgresContainer: BackendContainer = {
  async start(image, timeoutMs) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const c = await new PostgreSqlContainer(image)
      .withEnvironment({ POSTGRES_INITDB_ARGS: '--no-sync' })
      .withCommand(['postgres', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'])
      .withStartupTimeout(timeoutMs)
      .start();
    return { url: c.getConnectionUri(), id: c.getId().slice(0, 12), stop: async () => void (await c.stop()) };
  },
  async describe(url) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => {});
    await client.connect();
    try {
      const res = await client.query<{ server_version: string }>('SHOW server_version');
      const version = res.rows[0]?.server_version.split(' ')[0] ?? 'unknown';
      return { version, label: `PostgreSQL ${version}` };
    } finally {
      await client.end();
    }
  },
};
