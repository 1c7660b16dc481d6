/**
 * The upgrade test's machinery (e2e/upgrade/README.md): lays out an earlier build's packages in a
 * temp dir, runs e2e/upgrade/old-runner.mjs there to suspend runs of every kind, then resumes them
 * with today's packages on the same database and checks each run's output and body executions.
 */
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { Engine, RunRecord } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createEngine, defineWorkflow } from '@cairn/core';
import { type BuildSemantics, KINDS, eventPayload, expectedFor, upgradeWorkflows, type DefineWorkflow } from './workflows.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
export const BUILDS_DIR = join(here, 'builds');

/**
 * Where an old build's runtime dependencies are taken from: the workspace's own install (nothing is
 * downloaded or compiled). A build's package.json names them; 69ed3f8's were kysely,
 * better-sqlite3 and pg, 0.2.0 adds croner.
 */
const DEPENDENCY_SOURCES = [join(repo, 'packages', 'kysely', 'node_modules'), join(repo, 'packages', 'core', 'node_modules')];

export interface BuildManifest {
  commit: string;
  ref: string;
  date: string;
  packages: { name: string; version: string; file: string; bytes: number }[];
}

/** Every packed build under e2e/upgrade/builds/, oldest first. */
export function listBuilds(): { id: string; dir: string; manifest: BuildManifest }[] {
  if (!existsSync(BUILDS_DIR)) return [];
  return readdirSync(BUILDS_DIR)
    .filter((id) => existsSync(join(BUILDS_DIR, id, 'manifest.json')))
    .map((id) => ({ id, dir: join(BUILDS_DIR, id), manifest: JSON.parse(readFileSync(join(BUILDS_DIR, id, 'manifest.json'), 'utf8')) as BuildManifest }))
    .sort((a, b) => a.manifest.date.localeCompare(b.manifest.date));
}

/**
 * A temp dir laid out as node_modules/@cairn/core and node_modules/@cairn/kysely (the build's
 * tarballs unpacked) with the dependencies they name symlinked from the workspace's install, and the old
 * runner beside it. Returns the dir; the caller removes it.
 */
export function layOutOldBuild(build: { dir: string; manifest: BuildManifest }): string {
  const root = mkdtempSync(join(tmpdir(), 'cairn-upgrade-'));
  for (const name of ['@cairn/core', '@cairn/kysely']) {
    const pkg = build.manifest.packages.find((p) => p.name === name);
    if (!pkg) throw new Error(`build ${build.manifest.ref} has no ${name} tarball`);
    const dest = join(root, 'node_modules', name);
    mkdirSync(dest, { recursive: true });
    execFileSync('tar', ['xzf', join(build.dir, pkg.file), '-C', dest, '--strip-components=1']);
  }
  const needed = new Set<string>();
  for (const name of ['@cairn/core', '@cairn/kysely']) {
    const json = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const dep of [...Object.keys(json.dependencies ?? {}), ...Object.keys(json.peerDependencies ?? {})]) if (!dep.startsWith('@cairn/')) needed.add(dep);
  }
  for (const dep of needed) {
    const from = DEPENDENCY_SOURCES.map((dir) => join(dir, dep)).find((path) => existsSync(path));
    // An optional peer the workspace does not install (mysql2 for a SQLite/PostgreSQL test) is not needed.
    if (from === undefined) continue;
    const dest = join(root, 'node_modules', dep);
    mkdirSync(dirname(dest), { recursive: true });
    symlinkSync(realpathSync(from), dest, 'dir');
  }
  copyFileSync(join(here, 'old-runner.mjs'), join(root, 'old-runner.mjs'));
  return root;
}

export type UpgradeDb = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export interface SuspendedRun {
  runId: string;
  kind: string;
  workflow: string;
  n: number;
  /** Set on child runs: the parent's id. */
  parent?: string;
  oldStatus?: string;
}

/** Runs the old runner in `root` (a child process that sees only the old build) and returns the runs it suspended. */
export async function suspendUnderOldBuild(root: string, db: UpgradeDb, log: string, perKind: number): Promise<{ runs: SuspendedRun[]; stderr: string }> {
  const manifest = join(root, 'runs.json');
  const config = { db, workflows: pathToFileURL(join(here, 'workflows.ts')).href, log, manifest, perKind };
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    // tsx loads workflows.ts; no --conditions=@cairn/source (the tarballs have no such condition anyway).
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(root, 'old-runner.mjs')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '', CAIRN_UPGRADE_CONFIG: JSON.stringify(config) },
    });
    let err = '';
    child.stdout.on('data', (d: Buffer) => (err += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, stderr: err });
    });
  });
  if (code !== 0) throw new Error(`the old build's process exited with ${code}:\n${stderr}`);
  return { runs: (JSON.parse(readFileSync(manifest, 'utf8')) as { runs: SuspendedRun[] }).runs, stderr };
}

export interface RunVerdict {
  run: SuspendedRun;
  status: string;
  ok: boolean;
  /** What is wrong: the error, a different output, bodies run a wrong number of times. */
  problems: string[];
  errorCode?: string;
  errorMessage?: string;
}

/** Counts `<runId> <stepName>` lines per run and step. */
export function countBodies(log: string): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  if (!existsSync(log)) return counts;
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line) continue;
    const space = line.indexOf(' ');
    const runId = line.slice(0, space);
    const step = line.slice(space + 1);
    let perRun = counts.get(runId);
    if (!perRun) counts.set(runId, (perRun = new Map()));
    perRun.set(step, (perRun.get(step) ?? 0) + 1);
  }
  return counts;
}

/**
 * Opens today's engine on `store` with the same workflow code, sends the events meant for after
 * the upgrade, waits for every run to end (or `timeoutMs`), and judges each run, children included.
 */
export async function resumeWithToday(
  store: WorkflowStore,
  runs: SuspendedRun[],
  log: string,
  timeoutMs: number,
  semantics?: BuildSemantics,
): Promise<RunVerdict[]> {
  const engine: Engine = createEngine({
    store,
    workflows: upgradeWorkflows(defineWorkflow as DefineWorkflow, log) as Parameters<typeof createEngine>[0]['workflows'],
    recoveryIntervalMs: 200,
    stopGraceMs: 2000,
    logger: { warn() {}, error() {} },
  });
  await engine.start();
  const sendErrors = new Map<string, string>();
  try {
    const top = runs.filter((r) => !r.parent);
    for (const run of top) {
      const spec = KINDS.find((k) => k.workflow === run.workflow)!;
      for (const event of spec.events) {
        if (event.by !== 'new') continue;
        const target = event.target === 'run' ? run : runs.find((r) => r.parent === run.runId)!;
        try {
          await engine.sendEvent(target.runId, event.name, eventPayload(event.name, 'new', run.n));
        } catch (error) {
          sendErrors.set(target.runId, `sendEvent(${event.name}) threw: ${(error as Error).message}`);
        }
      }
    }
    // Every run ends (completed or failed) or the deadline passes.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = await Promise.all(runs.map((r) => engine.getRun(r.runId)));
      if (records.every((r) => r && (r.status === 'completed' || r.status === 'failed' || r.status === 'cancelled'))) break;
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const counts = countBodies(log);
    const verdicts: RunVerdict[] = [];
    for (const run of runs) {
      const record: RunRecord | undefined = await engine.getRun(run.runId);
      const problems: string[] = [];
      const expected = expectedFor(run.workflow, run.n, semantics);
      const status = record?.status ?? 'missing';
      if (status !== 'completed') problems.push(`status ${status}`);
      else if (!isDeepStrictEqual(record!.output, expected.output)) {
        problems.push(`output ${JSON.stringify(record!.output)} != expected ${JSON.stringify(expected.output)}`);
      }
      const ran = counts.get(run.runId) ?? new Map<string, number>();
      // Only judged when the run completed: a failed run stops short, which its status already says.
      if (status === 'completed') {
        for (const name of new Set([...Object.keys(expected.bodies), ...ran.keys()])) {
          const want = expected.bodies[name] ?? 0;
          const got = ran.get(name) ?? 0;
          if (got !== want) problems.push(`body ${name} ran ${got}x, expected ${want}x`);
        }
      }
      const send = sendErrors.get(run.runId);
      if (send) problems.push(send);
      verdicts.push({
        run,
        status,
        ok: problems.length === 0,
        problems,
        ...(record?.error ? { errorCode: record.error.code ?? record.error.name, errorMessage: record.error.message } : {}),
      });
    }
    return verdicts;
  } finally {
    await engine.stop();
  }
}

/** The failing runs as a table: id, kind, workflow, status, error code and message (or other problems). */
export function failureTable(verdicts: RunVerdict[]): string {
  const failing = verdicts.filter((v) => !v.ok);
  if (failing.length === 0) return '(no failures)';
  const rows = failing.map((v) => [
    v.run.runId,
    v.run.kind + (v.run.parent ? ' (child)' : ''),
    v.run.workflow,
    v.status,
    v.errorCode ?? '',
    v.errorMessage ?? v.problems.join('; '),
  ]);
  const header = ['run', 'kind', 'workflow', 'status', 'code', 'error / problem'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min(r[i]!.length, i === 5 ? 400 : 60))));
  const line = (cells: string[]) => cells.map((c, i) => (i === 5 ? c : c.padEnd(widths[i]!))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(Math.min(w, 60))).join('-|-'), ...rows.map(line)].join('\n');
}

/** One line per kind: how many runs of it ended right, and the distinct failures. */
export function summaryByKind(verdicts: RunVerdict[]): string {
  const lines: string[] = [];
  for (const spec of KINDS) {
    const of = verdicts.filter((v) => v.run.kind === spec.kind);
    const ok = of.filter((v) => v.ok).length;
    const reasons = new Map<string, number>();
    for (const v of of.filter((x) => !x.ok)) {
      const reason = `${v.run.parent ? 'child ' : ''}${v.status}${v.errorCode ? ` ${v.errorCode}` : ''}: ${(v.errorMessage ?? v.problems.join('; ')).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')}`;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    lines.push(`${spec.kind}: ${ok}/${of.length} ok${[...reasons].map(([r, c]) => `\n    ${c}x ${r}`).join('')}`);
  }
  return lines.join('\n');
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
