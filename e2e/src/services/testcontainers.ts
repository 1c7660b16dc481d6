/**
 * The Testcontainers path. `testcontainers` is an optional peer dependency, imported lazily so that
 * its import cost is paid only when we probe, and so that the provider works without it.
 */
import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { BackendContainer } from './containers/common.js';
import { mongodbContainer } from './containers/mongodb.js';
import { mysqlContainer } from './containers/mysql.js';
import { postgresContainer } from './containers/postgres.js';
import { redisContainer } from './containers/redis.js';
import type { ServiceName } from './types.js';

/** A server in a container that Testcontainers started. */
export interface ContainerServer {
  url: string;
  image: string;
  /** Container id (short). */
  id: string;
  /** The server's version as it reports it once reachable. */
  version: string;
  /** Product and version, e.g. `PostgreSQL 15.14`. */
  label: string;
  /** From the start of the container to the first real answer of the server. */
  startMs: number;
  /** Stops and removes the container. Idempotent. */
  stop(): Promise<void>;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

/**
 * The image each backend's container is started from, unless `CAIRN_TEST_<NAME>_IMAGE` says
 * otherwise: the official images. The project's CI builds images of the same names and contract
 * from Debian's packages (scripts/images); for MongoDB it sets `CAIRN_TEST_MONGODB_IMAGE` to its
 * FerretDB stand-in, `cairn/ferretdb:1.24.2`, since no MongoDB build can be had there.
 */
export const DEFAULT_IMAGES: Record<ServiceName, string> = {
  postgres: 'postgres:15',
  mysql: 'mariadb:10.11',
  mongodb: 'mongo:7.0',
  redis: 'redis:7',
};

const CONTAINERS: Record<ServiceName, BackendContainer> = {
  postgres: postgresContainer,
  mysql: mysqlContainer,
  mongodb: mongodbContainer,
  redis: redisContainer,
};

const IMAGE_ENV: Record<ServiceName, string> = {
  postgres: 'CAIRN_TEST_POSTGRES_IMAGE',
  mysql: 'CAIRN_TEST_MYSQL_IMAGE',
  mongodb: 'CAIRN_TEST_MONGODB_IMAGE',
  redis: 'CAIRN_TEST_REDIS_IMAGE',
};

export function imageFor(name: ServiceName, env: NodeJS.ProcessEnv): string {
  return env[IMAGE_ENV[name]] || DEFAULT_IMAGES[name];
}

function message(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
}

/**
 * Where Testcontainers (12.x) looks for a runtime, without importing it: DOCKER_HOST, the
 * ~/.testcontainers.properties file, or a Docker socket in one of its usual places. Returns the
 * first hint found, or undefined when a probe could not possibly succeed.
 */
export function containerRuntimeHint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.platform === 'win32') return 'Windows (named pipe)';
  if (env['DOCKER_HOST']) return `DOCKER_HOST=${env['DOCKER_HOST']}`;
  let home: string | undefined;
  let uid: number | undefined;
  try {
    home = homedir();
    uid = userInfo().uid;
  } catch {
    // no home directory or user entry
  }
  const files = [
    home && join(home, '.testcontainers.properties'),
    '/var/run/docker.sock',
    env['XDG_RUNTIME_DIR'] && join(env['XDG_RUNTIME_DIR'], 'docker.sock'),
    home && join(home, '.docker', 'run', 'docker.sock'),
    home && join(home, '.docker', 'desktop', 'docker.sock'),
    uid !== undefined && join('/run', 'user', String(uid), 'docker.sock'),
  ].filter((f): f is string => typeof f === 'string' && f !== '');
  return files.find((f) => existsSync(f));
}

let probeCache: Promise<ProbeResult> | undefined;

/**
 * Is there a container runtime? Answers within `timeoutMs` (plus the one-off import of
 * testcontainers) whatever happens: detection can hang without limit when DOCKER_HOST points at
 * something that accepts connections and never answers. Unless `force`, a machine with no
 * DOCKER_HOST, no ~/.testcontainers.properties and no Docker socket is answered at once without
 * importing testcontainers at all. The answer is cached for the process.
 */
export function probeContainerRuntime(timeoutMs: number, force = false): Promise<ProbeResult> {
  probeCache ??= doProbe(timeoutMs, force);
  return probeCache;
}

/** Forget the cached probe (for tests). */
export function resetContainerProbe(): void {
  probeCache = undefined;
}

async function doProbe(timeoutMs: number, force: boolean): Promise<ProbeResult> {
  if (!force && containerRuntimeHint() === undefined) {
    return { ok: false, reason: 'no container runtime configured (no DOCKER_HOST, ~/.testcontainers.properties or Docker socket)' };
  }
  let tc: typeof import('testcontainers');
  try {
    tc = await import('testcontainers');
  } catch (error) {
    return { ok: false, reason: `testcontainers is not installed (${message(error)})` };
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, reason: `container runtime (${containerRuntimeHint() ?? 'auto-detected'}) did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const attempt = tc.getContainerRuntimeClient().then(
    (): ProbeResult => ({ ok: true }),
    (error: unknown): ProbeResult => ({ ok: false, reason: `no container runtime (${message(error)})` }),
  );
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts a container for `name` and resolves once the server in it answers a real query. The
 * container is stopped again if that fails. Ryuk (Testcontainers' reaper) removes containers of a
 * process that dies, where it runs; with `TESTCONTAINERS_RYUK_DISABLED=true` (the project's CI, where
 * the reaper image cannot be pulled) only `stop()` does, which the shared services' teardown calls.
 */
export async function startContainer(name: ServiceName, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ContainerServer> {
  const image = imageFor(name, env);
  const backend = CONTAINERS[name];
  const started = Date.now();
  const c = await backend.start(image, timeoutMs);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= c.stop());
  try {
    const { version, label } = await backend.describe(c.url);
    return { url: c.url, image, id: c.id, version, label, startMs: Date.now() - started, stop };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}
