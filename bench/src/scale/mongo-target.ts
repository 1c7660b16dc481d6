/**
 * The MongoDB protocol in the scale bench, through FerretDB (its SQLite handler, as the tests and
 * `pnpm bench` run it here): one kept runner on `<dir>/ferretdb`, the loaded store in database
 * `scale_loaded` (kept), the small one in `scale_empty` (made again each run).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { uuidv7 } from '@cairn/core/backend';
import { createMongoStore } from '@cairn/mongodb';
import { MongoClient, type Db, type Document } from 'mongodb';
import { processTreeCpuMs } from '../servers/process-cpu.js';
import { loadInBatches, SMALL_RUNS, type LoadRange, type ScaleBackend, type ScaleTarget, type SizeRow } from './scale-targets.js';
import { makeTemplates, scaleEngine, STATUS_MIX, statusOf, STEPS_PER_RUN, WORKFLOW_COUNT } from './scale-workflows.js';
import type { Templates } from './sql-loader.js';

/** The runner: `CAIRN_FERRETDB_BIN`, else `tools/ferretdb-runner/ferretdb-runner` above the working directory. */
function ferretdbBin(): string {
  const given = process.env['CAIRN_FERRETDB_BIN'];
  if (given) return given;
  for (let dir = resolve(process.cwd()); ; dir = resolve(dir, '..')) {
    const candidate = join(dir, 'tools', 'ferretdb-runner', 'ferretdb-runner');
    if (existsSync(candidate)) return candidate;
    if (dir === resolve(dir, '..')) throw new Error('ferretdb-runner not found (set CAIRN_FERRETDB_BIN)');
  }
}

/**
 * A copy of template run document `tpl` as run `id`: `_id` and every text naming the template's id
 * (its `idem`, a cancelled run's error) name the new one, every `…At` number moves by `delta`,
 * and the workflow is `workflow`. Every other field is the engine's own value.
 */
function copyDoc(value: unknown, tplId: string, id: string, delta: number, key = ''): unknown {
  if (typeof value === 'string') return value.split(tplId).join(id);
  if (typeof value === 'number') return key.endsWith('At') ? value + delta : value;
  if (Array.isArray(value)) return value.map((v) => copyDoc(v, tplId, id, delta));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = copyDoc(v, tplId, id, delta, k);
    return out;
  }
  return value;
}

/** Loads runs into `db`'s `cairn_runs` by copying the template documents, `batch` per `insertMany`, run `n` as the SQL loaders do. */
async function loadMongoRuns(db: Db, templates: Templates, range: LoadRange, batch = 1000): Promise<void> {
  const runs = db.collection('cairn_runs');
  const docs = new Map<string, Document>();
  for (const { status } of STATUS_MIX) {
    const doc = await runs.findOne({ _id: templates[status] as never });
    if (!doc) throw new Error(`template run ${templates[status]} not found`);
    docs.set(status, doc);
  }
  const pick = (n: number): Document => docs.get(statusOf(n))!;
  for (let start = 0; start < range.count; start += batch) {
    const page: Document[] = [];
    for (let i = start; i < Math.min(range.count, start + batch); i++) {
      const n = range.first + i;
      const tpl = pick(n);
      const created = range.createdFrom + i * range.spacingMs;
      const id = uuidv7(created);
      const copy = copyDoc(tpl, String(tpl['_id']), id, created - Number(tpl['createdAt'])) as Document;
      copy['workflow'] = `scale-w${(n + Math.floor(n / 100)) % WORKFLOW_COUNT}`;
      page.push(copy);
    }
    await runs.insertMany(page, { ordered: false });
  }
}

/** MongoDB (FerretDB) in the scale bench. */
export async function mongoScale(dir: string, runs: number, loadBatch: number, log: (line: string) => void): Promise<ScaleBackend> {
  const root = join(dir, 'ferretdb');
  mkdirSync(root, { recursive: true });
  const child = spawn(ferretdbBin(), ['-dir', join(root, 'data'), '-listen', '127.0.0.1:0', '-log-level', 'warn', '-exit-on-stdin-eof'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((ok, fail) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      rl.close();
      ok(line.trim());
    });
    child.once('exit', (code) => fail(new Error(`ferretdb-runner exited with ${code}`)));
  });
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
  await client.connect();
  const version = String((await client.db('admin').command({ buildInfo: 1 }))['version'] ?? '?');
  const metaFile = join(dir, 'mongodb.json');
  const open = async (label: 'empty' | 'loaded', templates?: Templates): Promise<ScaleTarget> => {
    const db = client.db(`scale_${label}`);
    const store = createMongoStore({ db, collectionPrefix: 'cairn_' });
    await store.init();
    let made = templates;
    if (made === undefined) {
      const engine = scaleEngine(store);
      await engine.start();
      made = await makeTemplates(engine, STEPS_PER_RUN);
      await engine.stop();
    }
    const engine = scaleEngine(store);
    await engine.start({ workers: false });
    const fixed = made;
    return {
      label,
      store,
      engine,
      templates: fixed,
      load: (range) => loadMongoRuns(db, fixed, range),
      async counts() {
        const n = await db.collection('cairn_runs').countDocuments();
        // Steps live inside the run document: every loaded run holds its template's.
        return { runs: n, steps: n * STEPS_PER_RUN };
      },
      async sizes(): Promise<SizeRow[]> {
        const out: SizeRow[] = [];
        for (const name of ['cairn_runs']) {
          const stats = await db.command({ collStats: name }).catch(() => undefined);
          out.push({
            table: name,
            rows: Number(stats?.['count'] ?? 0),
            dataBytes: Number(stats?.['storageSize'] ?? stats?.['size'] ?? 0),
            indexBytes: Number(stats?.['totalIndexSize'] ?? 0),
          });
        }
        const dbStats = await db.command({ dbStats: 1 }).catch(() => undefined);
        if (dbStats)
          out.push({
            table: 'the whole database (dbStats)',
            rows: Number(dbStats['objects'] ?? 0),
            dataBytes: Number(dbStats['storageSize'] ?? 0),
            indexBytes: Number(dbStats['indexSize'] ?? 0),
          });
        return out;
      },
      async close() {
        await engine.stop();
      },
    };
  };
  return {
    name: 'mongodb',
    title: 'MongoDB (FerretDB)',
    server: `FerretDB ${version} (its SQLite handler), data in ${root}`,
    serverCpuMs: () => processTreeCpuMs(child.pid ?? -1),
    async loaded() {
      const meta = existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, 'utf8')) as { runs: number; templates: Templates }) : undefined;
      if (meta?.runs === runs && (await client.db('scale_loaded').collection('cairn_runs').estimatedDocumentCount()) >= runs)
        return { target: await open('loaded', meta.templates), fresh: false };
      await client.db('scale_loaded').dropDatabase();
      const target = await open('loaded');
      await loadInBatches(target, runs, loadBatch, log);
      writeFileSync(metaFile, JSON.stringify({ templates: target.templates, runs }));
      return { target, fresh: true };
    },
    async empty() {
      await client.db('scale_empty').dropDatabase();
      const target = await open('empty');
      await loadInBatches(target, SMALL_RUNS, SMALL_RUNS, () => {});
      return target;
    },
    async close() {
      await client.close();
      await new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once('exit', () => ok());
        child.kill('SIGTERM');
      });
    },
  };
}
