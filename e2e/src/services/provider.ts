/**
 * The test-server provider. For each backend it yields a server URL, trying in order:
 *  1. an explicit URL from the environment (CAIRN_TEST_<NAME>_URL);
 *  2. Testcontainers, when a container runtime answers within a short timeout;
 *  3. a locally installed server, started on a free port in a temp dir;
 *  4. otherwise a skip with the reason — or an error when CAIRN_TEST_REQUIRE names the backend.
 * CAIRN_TEST_PROVIDER=testcontainers or =local keeps only step 2 or step 3 (then 4); in a process
 * running a conformance file, CAIRN_TEST_CONFORMANCE_PROVIDER (when set) takes its place.
 */
import { providerSetting } from './provider-setting.js';
import { redactUrl } from './summary.js';
import { NotInstalledError, defaultTmpDir, errorText, type LocalContext, type LocalServer } from './local/common.js';
import { startLocalFerretdb } from './local/ferretdb.js';
import { startLocalMysql } from './local/mysql.js';
import { startLocalPostgres } from './local/postgres.js';
import { stopAllLocalServers } from './local/process.js';
import { startLocalRedis } from './local/redis.js';
import { probeContainerRuntime, startContainer } from './testcontainers.js';
import {
  SERVICE_NAMES,
  ServiceUnavailableError,
  type ProviderMode,
  type RunningService,
  type ServiceName,
  type ServiceOptions,
  type ServiceResult,
} from './types.js';

/** Environment variable holding an explicit URL for each backend. */
export const URL_ENV: Record<ServiceName, string> = {
  postgres: 'CAIRN_TEST_POSTGRES_URL',
  mysql: 'CAIRN_TEST_MYSQL_URL',
  mongodb: 'CAIRN_TEST_MONGODB_URL',
  redis: 'CAIRN_TEST_REDIS_URL',
};

const ALIASES: Record<string, ServiceName> = {
  postgres: 'postgres',
  postgresql: 'postgres',
  pg: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
  mongodb: 'mongodb',
  mongo: 'mongodb',
  ferretdb: 'mongodb',
  redis: 'redis',
};

/**
 * Parses CAIRN_TEST_REQUIRE: a comma list of backends (`postgres,redis`; aliases such as `mariadb`,
 * `mongo` are accepted) or `all`. Unknown names are an error, so that a typo cannot silently turn a
 * required backend into a skipped one.
 */
export function parseRequire(value: string | undefined): Set<ServiceName> {
  const out = new Set<ServiceName>();
  for (const raw of (value ?? '').split(',')) {
    const word = raw.trim().toLowerCase();
    if (word === '' || word === 'none' || word === '0') continue;
    if (word === 'all' || word === '1' || word === 'true') {
      for (const n of SERVICE_NAMES) out.add(n);
      continue;
    }
    const name = ALIASES[word];
    if (!name) {
      throw new Error(`CAIRN_TEST_REQUIRE: unknown backend ${JSON.stringify(raw.trim())} (expected all or a comma list of ${SERVICE_NAMES.join(', ')})`);
    }
    out.add(name);
  }
  return out;
}

const PROVIDER_MODES: readonly ProviderMode[] = ['auto', 'testcontainers', 'local'];

/**
 * Parses CAIRN_TEST_PROVIDER: `auto` (or unset), `testcontainers` or `local`. Anything else is an
 * error, so that a typo cannot turn a run meant for one source into a run on another.
 */
export function parseProvider(value: string | undefined, variable = 'CAIRN_TEST_PROVIDER'): ProviderMode {
  const word = (value ?? '').trim().toLowerCase();
  if (word === '') return 'auto';
  const mode = PROVIDER_MODES.find((m) => m === word);
  if (!mode) {
    throw new Error(`${variable}: unknown provider ${JSON.stringify(value)} (expected ${PROVIDER_MODES.join(', ')})`);
  }
  return mode;
}

const LOCAL_STARTERS: Record<ServiceName, (ctx: LocalContext) => Promise<LocalServer>> = {
  postgres: startLocalPostgres,
  mysql: startLocalMysql,
  mongodb: startLocalFerretdb,
  redis: startLocalRedis,
};

function flag(value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  return !/^(0|false|no|off)$/i.test(value.trim());
}

function positiveInt(value: string | undefined): number | undefined {
  const n = Number(value);
  return value && Number.isFinite(n) && n > 0 ? n : undefined;
}

function defaultLog(line: string): void {
  process.stderr.write(`[cairn services] ${line}\n`);
}

interface Resolved {
  env: NodeJS.ProcessEnv;
  provider: ProviderMode;
  testcontainers: boolean | 'auto';
  probeTimeoutMs: number;
  local: boolean;
  ctx: LocalContext;
}

function resolveOptions(options: ServiceOptions): Resolved {
  const env = options.env ?? process.env;
  const log = options.log ?? defaultLog;
  const setting = providerSetting(env);
  const provider = options.provider ?? parseProvider(setting.value, setting.variable);
  return {
    env,
    provider,
    // CAIRN_TEST_TESTCONTAINERS: 0 = never, 1 = always probe (even with no runtime configured), unset = auto.
    // CAIRN_TEST_PROVIDER=testcontainers probes even with no runtime configured, so that the
    // failure names the real reason.
    testcontainers:
      provider === 'local' ? false : (options.testcontainers ?? flag(env['CAIRN_TEST_TESTCONTAINERS']) ?? (provider === 'testcontainers' ? true : 'auto')),
    probeTimeoutMs: options.probeTimeoutMs ?? positiveInt(env['CAIRN_TEST_CONTAINER_PROBE_MS']) ?? 2000,
    local: provider === 'testcontainers' ? false : (options.local ?? flag(env['CAIRN_TEST_LOCAL']) ?? true),
    ctx: {
      env,
      binDir: options.localBinDir ?? (env['CAIRN_TEST_LOCAL_BIN_DIR'] || undefined),
      ferretdbBin: options.ferretdbBin ?? (env['CAIRN_FERRETDB_BIN'] || undefined),
      startTimeoutMs: options.startTimeoutMs ?? positiveInt(env['CAIRN_TEST_START_TIMEOUT_MS']) ?? 60_000,
      tmpDir: options.tmpDir ?? defaultTmpDir(),
      log,
    },
  };
}

function fmtMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Starts (or finds) a server for `name`. Every call starts a new server unless the URL comes from
 * the environment; use {@link useService} to share one server per test process.
 */
export async function startService(name: ServiceName, options: ServiceOptions = {}): Promise<ServiceResult> {
  const o = resolveOptions(options);
  const log = o.ctx.log;
  const required = parseRequire(o.env['CAIRN_TEST_REQUIRE']).has(name);
  const reasons: string[] = [];

  // 1. An explicit URL (not when the run is meant for one source only).
  const url = o.provider === 'auto' ? o.env[URL_ENV[name]] : undefined;
  if (url) {
    return {
      skipped: false,
      name,
      url,
      source: 'env',
      detail: `${URL_ENV[name]}=${redactUrl(url)}`,
      stop: async () => {},
    };
  }
  reasons.push(o.provider === 'auto' ? `${URL_ENV[name]} is not set` : `CAIRN_TEST_PROVIDER=${o.provider}`);

  // 2. Testcontainers.
  if (o.testcontainers !== false) {
    const probe = await probeContainerRuntime(o.probeTimeoutMs, o.testcontainers === true);
    if (probe.ok) {
      try {
        const c = await startContainer(name, o.env, o.ctx.startTimeoutMs);
        log(`${name}: Testcontainers started ${c.label} from image ${c.image} (container ${c.id}) in ${fmtMs(c.startMs)}`);
        return {
          skipped: false,
          name,
          url: c.url,
          source: 'testcontainers',
          version: c.version,
          image: c.image,
          detail: `${c.label}, image ${c.image}, started in ${fmtMs(c.startMs)}`,
          stop: c.stop,
        };
      } catch (error) {
        reasons.push(`Testcontainers could not start ${name}: ${errorText(error)}`);
      }
    } else {
      reasons.push(`Testcontainers: ${probe.reason}`);
    }
  } else {
    reasons.push(o.provider === 'local' ? 'Testcontainers not used (CAIRN_TEST_PROVIDER=local)' : 'Testcontainers disabled');
  }

  // 3. A locally installed server.
  if (o.local) {
    try {
      const s = await LOCAL_STARTERS[name](o.ctx);
      const product = s.label;
      log(`${name}: started local ${product} (pid ${s.process.pid}, ${s.process.dir}) in ${fmtMs(s.startMs)}`);
      return {
        skipped: false,
        name,
        url: s.url,
        source: 'local',
        version: s.version,
        pid: s.process.pid,
        dir: s.process.dir,
        detail: `${product}, ${s.process.dir}, started in ${fmtMs(s.startMs)}`,
        ...(s.restart ? { halt: s.restart.halt, resume: s.restart.resume } : {}),
        stop: () => (s.restart ? s.restart.stop() : s.process.stop()),
      };
    } catch (error) {
      if (error instanceof NotInstalledError) reasons.push(`local: ${error.message}`);
      else reasons.push(`local server failed to start: ${errorText(error)}`);
    }
  } else {
    reasons.push(o.provider === 'testcontainers' ? 'local servers not used (CAIRN_TEST_PROVIDER=testcontainers)' : 'local servers disabled');
  }

  // 4. Skip, or fail when required.
  const reason = reasons.join('; ');
  if (required) {
    throw new ServiceUnavailableError(name, `CAIRN_TEST_REQUIRE=${o.env['CAIRN_TEST_REQUIRE']} requires ${name}, but no server could be had: ${reason}`);
  }
  log(`${name}: skipped: ${reason}`);
  return { skipped: true, name, reason };
}

const shared = new Map<ServiceName, Promise<ServiceResult>>();

/**
 * The server for `name`, started once per test process and shared: tests isolate themselves with
 * their own database, schema, db name or key prefix (see namespaces). Options apply to the first
 * call only. Stopped by {@link stopSharedServices}, and in any case when the process exits.
 */
export function useService(name: ServiceName, options: ServiceOptions = {}): Promise<ServiceResult> {
  let p = shared.get(name);
  if (!p) {
    p = startService(name, options);
    shared.set(name, p);
    // A failed start (required backend missing) is not cached: the next caller sees the error anew.
    p.catch(() => shared.delete(name));
  }
  return p;
}

export const usePostgres = (options?: ServiceOptions): Promise<ServiceResult> => useService('postgres', options);
export const useMysql = (options?: ServiceOptions): Promise<ServiceResult> => useService('mysql', options);
export const useMongodb = (options?: ServiceOptions): Promise<ServiceResult> => useService('mongodb', options);
export const useRedis = (options?: ServiceOptions): Promise<ServiceResult> => useService('redis', options);

/** Stops the shared servers started by {@link useService} (and any other local server of this process). */
export async function stopSharedServices(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  const results = await Promise.allSettled(all);
  await Promise.allSettled(results.flatMap((r) => (r.status === 'fulfilled' && !r.value.skipped ? [r.value.stop()] : [])));
  await stopAllLocalServers();
}

export type { RunningService };
