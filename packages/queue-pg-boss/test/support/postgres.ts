import { createPostgresDatabase, dropPostgresDatabase, usePostgres } from '@cairn/conformance/services';

/** A PostgreSQL the tests can use, or the reason there is none. */
export type TestPostgres = { url: string; source: string } | { skip: string };

/**
 * The PostgreSQL of this test process, from `@cairn/conformance/services`: `CAIRN_TEST_POSTGRES_URL`,
 * else Testcontainers when a runtime answers, else a local server on a free port. Without any, the
 * reason is printed and returned, unless `CAIRN_TEST_REQUIRE` names postgres (or is `all`): then
 * this throws and the tests fail.
 */
export async function providePostgres(): Promise<TestPostgres> {
  const service = await usePostgres();
  if (service.skipped) {
    console.log(`# @cairn/queue-pg-boss tests skipped: ${service.reason}`);
    return { skip: service.reason };
  }
  return { url: service.url, source: `${service.source}: ${service.detail}` };
}

/** The URL of database `name` on the server of `url`. */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh, empty database; returns its URL. */
export function createDatabase(url: string, name?: string): Promise<string> {
  return createPostgresDatabase(url, name);
}

/** Drops a database made by `createDatabase`, closing its connections. */
export function dropDatabase(dbUrl: string): Promise<void> {
  return dropPostgresDatabase(dbUrl);
}
