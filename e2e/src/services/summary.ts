import type { ServiceResult } from './types.js';

/** Hides the password in a connection URL. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
  }
}

/**
 * One line naming a backend and where its server came from, for test output:
 * `postgres: local (PostgreSQL 15.14, /tmp/cairn-postgres-Ab12, started in 1.3 s)`,
 * `redis: env (CAIRN_TEST_REDIS_URL=redis://ci:6379)`, `mongodb: skipped (...)`.
 */
export function summaryLine(result: ServiceResult): string {
  if (result.skipped) return `${result.name}: skipped (${result.reason})`;
  return `${result.name}: ${result.source} (${result.detail})`;
}

/** Several summary lines, one per backend. */
export function summarize(results: readonly ServiceResult[]): string {
  return results.map(summaryLine).join('\n');
}
