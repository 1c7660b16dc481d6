/**
 * The Testcontainers path. `testcontainers` is an optional peer dependency, imported lazily so that
 * its import cost is paid only when we probe, and so that the provider works without it.
 */
import type { ServiceName } from './types.js';

export interface ContainerServer {
  url: string;
  image: string;
  version: string | undefined;
  startMs: number;
  stop(): Promise<void>;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

export const DEFAULT_IMAGES: Record<ServiceName, string> = {
  postgres: 'postgres:15-alpine',
  mysql: 'mariadb:10.11',
  mongodb: 'mongo:7.0',
  redis: 'redis:7-alpine',
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
  return error instanceof Error ? error.message.split('\n')[0] ?? error.name : String(error);
}

let probeCache: Promise<ProbeResult> | undefined;

/**
 * Is there a container runtime? Answers within `timeoutMs` whatever happens: detection can hang
 * without limit when DOCKER_HOST points at something that accepts connections and never answers.
 * The answer is cached for the process (a second probe would hit the same runtime).
 */
export function probeContainerRuntime(timeoutMs: number): Promise<ProbeResult> {
  probeCache ??= doProbe(timeoutMs);
  return probeCache;
}

/** Forget the cached probe (for tests). */
export function resetContainerProbe(): void {
  probeCache = undefined;
}

async function doProbe(timeoutMs: number): Promise<ProbeResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, reason: `container runtime did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const attempt = (async (): Promise<ProbeResult> => {
    let tc: typeof import('testcontainers');
    try {
      tc = await import('testcontainers');
    } catch (error) {
      return { ok: false, reason: `testcontainers is not installed (${message(error)})` };
    }
    try {
      await tc.getContainerRuntimeClient();
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `no container runtime (${message(error)})` };
    }
  })();
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a container for `name`. Containers are also reaped by Testcontainers' Ryuk if we die. */
export async function startContainer(name: ServiceName, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ContainerServer> {
  const image = imageFor(name, env);
  const started = Date.now();
  switch (name) {
    case 'postgres': {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const c = await new PostgreSqlContainer(image).withStartupTimeout(timeoutMs).start();
      return { url: c.getConnectionUri(), image, version: undefined, startMs: Date.now() - started, stop: async () => void (await c.stop()) };
    }
    case 'mysql': {
      const { MariaDbContainer } = await import('@testcontainers/mariadb');
      const c = await new MariaDbContainer(image).withDatabase('cairn').withStartupTimeout(timeoutMs).start();
      // Root, so that tests can create their own databases.
      return { url: c.getConnectionUri(true), image, version: undefined, startMs: Date.now() - started, stop: async () => void (await c.stop()) };
    }
    case 'mongodb': {
      const { MongoDBContainer } = await import('@testcontainers/mongodb');
      const c = await new MongoDBContainer(image).withStartupTimeout(timeoutMs).start();
      // A single-node replica set reachable through a mapped port: connect directly.
      const url = `${c.getConnectionString().replace(/\/?$/, '/')}?directConnection=true`;
      return { url, image, version: undefined, startMs: Date.now() - started, stop: async () => void (await c.stop()) };
    }
    case 'redis': {
      const { RedisContainer } = await import('@testcontainers/redis');
      const c = await new RedisContainer(image).withStartupTimeout(timeoutMs).start();
      return { url: c.getConnectionUrl(), image, version: undefined, startMs: Date.now() - started, stop: async () => void (await c.stop()) };
    }
  }
}
