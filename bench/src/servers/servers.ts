import { startService, type RunningService, type ServiceName } from '@cairn/conformance/services';
import { startDurablePostgres, type DurablePostgres } from './durable-postgres.js';

/** A server the bench uses: its URL and how to describe it in the report. */
export interface BenchServer {
  url: string;
  /** Product and version, e.g. `PostgreSQL 15.14`. */
  product: string;
  /** How durable it is configured (it matters for every timing on it). */
  durability: string;
  /** The server's main process, where the bench started it (PostgreSQL): its CPU can be read. */
  pid?: number;
}

/**
 * The servers of one bench run, each started once on first use and stopped at the end.
 * PostgreSQL is our own durable server (see durable-postgres.ts); MariaDB, Redis and FerretDB
 * come from the test service provider (`@cairn/conformance/services`), always as local binaries
 * on a free port (provider `local`): the numbers must not include container networking.
 */
export class Servers {
  readonly #started = new Map<string, Promise<BenchServer>>();
  readonly #stops: (() => Promise<void>)[] = [];

  constructor(private readonly log: (line: string) => void) {}

  /** The durable PostgreSQL (fsync on). */
  postgres(): Promise<BenchServer> {
    return this.#once('postgres', async () => {
      const server: DurablePostgres = await startDurablePostgres(this.log);
      this.#stops.push(server.stop);
      return { url: server.url, product: `PostgreSQL ${server.version}`, durability: server.settings, pid: server.pid };
    });
  }

  /** MariaDB/MySQL, MongoDB protocol (FerretDB locally) or Redis from the test service provider. */
  service(name: Exclude<ServiceName, 'postgres'>): Promise<BenchServer> {
    return this.#once(name, async () => {
      // Local binaries only: the numbers must not include container networking.
      const result = await startService(name, { provider: 'local', log: (line) => this.log(`services: ${line}`) });
      if (result.skipped) throw new Error(result.reason);
      const running: RunningService = result;
      this.#stops.push(() => running.stop());
      return { url: running.url, product: describe(running), durability: DURABILITY[name](running) };
    });
  }

  async stopAll(): Promise<void> {
    await Promise.allSettled(this.#stops.splice(0).map((stop) => stop()));
  }

  #once(key: string, start: () => Promise<BenchServer>): Promise<BenchServer> {
    let p = this.#started.get(key);
    if (!p) {
      p = start();
      this.#started.set(key, p);
    }
    return p;
  }
}

function describe(s: RunningService): string {
  const version = s.version ?? '';
  const detail = s.detail.split(' (')[0] ?? s.detail;
  if (s.name === 'mysql') return version.toLowerCase().includes('mariadb') ? `MariaDB ${version.replace(/-MariaDB.*/i, '')}` : `MySQL ${version}`.trim();
  if (s.name === 'mongodb') return version ? `FerretDB ${version}` : detail;
  if (s.name === 'redis') return `Redis ${version}`.trim();
  return detail;
}

const DURABILITY: Record<Exclude<ServiceName, 'postgres'>, (s: RunningService) => string> = {
  mysql: (s) => (s.source === 'local' ? 'test provider: innodb_flush_log_at_trx_commit=0 (no flush per commit)' : `from ${s.source}`),
  mongodb: (s) => (s.source === 'local' ? 'test provider: FerretDB on its SQLite handler' : `from ${s.source}`),
  redis: (s) => (s.source === 'local' ? 'test provider: no persistence (--save "", --appendonly no)' : `from ${s.source}`),
};
