import { usePostgres, useMysql, type ServiceResult } from '@cairn/conformance/services';

/** A server for the SQL tests: its URL, or why there is none (the tests then skip, by name). */
export type SqlServer = { url: string; source: string; skip?: undefined } | { skip: string };

async function resolve(result: Promise<ServiceResult>): Promise<SqlServer> {
  const service = await result;
  if (service.skipped) return { skip: service.reason };
  return { url: service.url, source: `${service.source}: ${service.detail}` };
}

/**
 * The PostgreSQL server of this test process: `CAIRN_TEST_POSTGRES_URL`, Testcontainers, or a local
 * `postgres` started on a free port (shared by every test file of the process). Throws when
 * `CAIRN_TEST_REQUIRE` names postgres (or is `all`) and none can be had.
 */
export const postgresServer = (): Promise<SqlServer> => resolve(usePostgres());

/** The MySQL-protocol server (MariaDB locally); see `postgresServer`. */
export const mysqlServer = (): Promise<SqlServer> => resolve(useMysql());
