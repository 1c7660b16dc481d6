import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { NotInstalledError, defaultFerretdbBin, isExecutable, makeTempDir, removeDir, waitReady, type LocalContext, type LocalServer } from './common.js';
import { spawnManaged, type ManagedProcess } from './process.js';

export function findFerretdb(ctx: LocalContext): string {
  if (ctx.ferretdbBin !== undefined) {
    if (isExecutable(ctx.ferretdbBin)) return ctx.ferretdbBin;
    throw new NotInstalledError(`FerretDB runner not found at ${ctx.ferretdbBin} (CAIRN_FERRETDB_BIN)`);
  }
  if (ctx.binDir !== undefined) {
    const candidate = join(ctx.binDir, 'ferretdb-runner');
    if (isExecutable(candidate)) return candidate;
    throw new NotInstalledError(`ferretdb-runner not found in CAIRN_TEST_LOCAL_BIN_DIR=${ctx.binDir}`);
  }
  const found = defaultFerretdbBin();
  if (!found) {
    throw new NotInstalledError(
      'FerretDB runner not found (set CAIRN_FERRETDB_BIN, or build it: cd tools/ferretdb-runner && CGO_ENABLED=0 go build -o ferretdb-runner .)',
    );
  }
  return found;
}

/** Reads the first stdout line (the MongoDB URI the runner prints once it listens). */
async function firstLine(proc: ManagedProcess, timeoutMs: number): Promise<string> {
  const stdout = proc.child.stdout;
  if (!stdout) throw new Error('no stdout pipe');
  const rl = createInterface({ input: stdout });
  try {
    return await waitReadyLine(proc, rl, timeoutMs);
  } finally {
    rl.close();
    // The runner prints nothing else; drop the pipe so it cannot keep this process alive.
    stdout.destroy();
  }
}

function waitReadyLine(proc: ManagedProcess, rl: ReturnType<typeof createInterface>, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`FerretDB printed no URI within ${timeoutMs} ms; log ${proc.logFile}:\n${proc.logTail()}`)), timeoutMs);
    rl.once('line', (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    void proc.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`FerretDB exited during startup (code ${code}, signal ${signal}); log ${proc.logFile}:\n${proc.logTail()}`));
    });
  });
}

/**
 * FerretDB (MongoDB wire protocol over SQLite) from our embedded runner. It picks its own free
 * port and exits by itself if this process dies (it watches its stdin pipe).
 */
export async function startLocalFerretdb(ctx: LocalContext): Promise<LocalServer> {
  const started = Date.now();
  const bin = findFerretdb(ctx);
  // Its SQLite files on a tmpfs where there is one: writes skip the disk's fsync (2-3x faster
  // per write, measured), as the other local servers run without a flush per commit.
  const dir = makeTempDir(existsSync('/dev/shm') ? { ...ctx, tmpDir: '/dev/shm' } : ctx, 'ferretdb');
  try {
    const proc = spawnManaged({
      command: bin,
      args: ['-dir', join(dir, 'data'), '-listen', '127.0.0.1:0', '-log-level', 'warn', '-exit-on-stdin-eof'],
      dir,
      logFile: join(dir, 'server.log'),
      stdout: 'pipe',
      stdinPipe: true,
      stopSignal: 'SIGTERM',
    });
    try {
      const uri = await firstLine(proc, ctx.startTimeoutMs);
      if (!uri.startsWith('mongodb://')) throw new Error(`FerretDB runner printed ${JSON.stringify(uri)} instead of a MongoDB URI`);
      const { MongoClient } = await import('mongodb');
      const version = await waitReady(`FerretDB (pid ${proc.pid})`, proc, ctx.startTimeoutMs, async () => {
        const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
        try {
          await client.connect();
          await client.db('admin').command({ ping: 1 });
          const info = await client.db('admin').command({ buildInfo: 1 });
          return String(info['version'] ?? 'unknown');
        } finally {
          await client.close();
        }
      });
      return { url: uri, version, product: 'FerretDB', label: `FerretDB (MongoDB ${version} wire protocol)`, process: proc, startMs: Date.now() - started };
    } catch (error) {
      await proc.stop();
      throw error;
    }
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}
