// CI's test pool: runs a list of jobs on N lanes, the longest chain first (plan.ts), each job's
// output whole when it ends (never interleaved), and reports each job's duration.
//
//   node --import tsx scripts/ci/pool/main.ts --jobs FILE --lanes N --dir DIR [--summary FILE] [--learned FILE]
//
// --jobs     a JSON array of PoolJob (plan.ts)
// --dir      where each job's own log goes
// --summary  written at the end: one line per job, "<seconds>\t<name>[ (FAILED|SKIPPED)]", in start order
// --learned  a JSON object {job name: seconds}: read before (it overrides expectedSeconds, so a
//            machine orders by what it measured last), merged with this run's successful jobs after
// Exit status 0 when every job ended ok, 1 otherwise (a job whose dependency failed is skipped).
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { blockedJobs, checkJobs, nextJob, priorities, type JobOutcome, type PoolJob } from './plan.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string' },
    lanes: { type: 'string', default: '2' },
    dir: { type: 'string' },
    summary: { type: 'string' },
    learned: { type: 'string' },
  },
  strict: true,
});
if (values.jobs === undefined || values.dir === undefined)
  throw new Error('usage: main.ts --jobs FILE --dir DIR [--lanes N] [--summary FILE] [--learned FILE]');
const lanes = Number(values.lanes);
if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`--lanes must be an integer >= 1 (got ${values.lanes})`);

const learned: Record<string, number> = values.learned !== undefined && existsSync(values.learned) ? JSON.parse(readFileSync(values.learned, 'utf8')) : {};
const jobs: PoolJob[] = (JSON.parse(readFileSync(values.jobs, 'utf8')) as PoolJob[]).map((job) => ({
  ...job,
  expectedSeconds: typeof learned[job.name] === 'number' ? (learned[job.name] as number) : job.expectedSeconds,
}));
checkJobs(jobs);
const priority = priorities(jobs);
const dir = values.dir;
mkdirSync(dir, { recursive: true });

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const t0 = Date.now();
const seconds = (ms: number) => Math.round(ms / 1000);
const logOf = (job: PoolJob) => join(dir, `${job.name.replace(/[^A-Za-z0-9._-]/g, '_')}.log`);

interface Run {
  job: PoolJob;
  lane: number;
  start: number;
  end?: number;
  outcome?: JobOutcome;
}
const records: Run[] = [];
const started = new Set<string>();
const ended = new Map<string, JobOutcome>();
const running = new Map<number, ChildProcess>();
const freeLanes = Array.from({ length: lanes }, (_, i) => lanes - i);

function startJob(job: PoolJob, lane: number): void {
  started.add(job.name);
  const record: Run = { job, lane, start: Date.now() };
  records.push(record);
  console.log(
    `=== [ci] | started: ${job.name} (lane ${lane}, expected ~${Math.round(job.expectedSeconds)}s, at +${seconds(record.start - t0)}s, load ${load()})`,
  );
  const fd = openSync(logOf(job), 'w');
  const [program, ...args] = job.command as [string, ...string[]];
  // Its own process group, so that a stopped pool stops the job's children too.
  const child = spawn(program, args, { stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  running.set(lane, child);
  let done = false;
  const finish = (status: number | null, error?: Error) => {
    if (done) return;
    done = true;
    running.delete(lane);
    record.end = Date.now();
    record.outcome = status === 0 ? 'ok' : 'failed';
    ended.set(job.name, record.outcome);
    if (error) appendFileSync(logOf(job), `\n${error.message}\n`);
    const output = readFileSync(logOf(job), 'utf8');
    if (job.log !== undefined) appendFileSync(job.log, output);
    const took = seconds(record.end - record.start);
    console.log(`\n=== [ci] | ${job.name}: output`);
    process.stdout.write(output.endsWith('\n') || output === '' ? output : `${output}\n`);
    console.log(`=== [ci] | ${job.name}: ${record.outcome === 'ok' ? 'ok' : `FAILED (exit ${String(status)})`} in ${took}s (lane ${lane}, load ${load()})`);
    freeLanes.push(lane);
    schedule();
  };
  child.on('error', (error) => finish(null, error));
  child.on('close', (code, signal) => finish(code ?? (signal === null ? null : 128), undefined));
}

function schedule(): void {
  for (const job of blockedJobs(jobs, ended)) {
    if (ended.has(job.name)) continue;
    ended.set(job.name, 'skipped');
    started.add(job.name);
    records.push({ job, lane: 0, start: Date.now(), end: Date.now(), outcome: 'skipped' });
    console.log(`=== [ci] | ${job.name}: SKIPPED (a job it waits for did not succeed: ${job.after.join(', ')})`);
  }
  while (freeLanes.length > 0) {
    const job = nextJob(jobs, priority, started, ended);
    if (job === undefined) break;
    startJob(job, freeLanes.pop() as number);
  }
  if (ended.size === jobs.length) finishPool();
}

function finishPool(): void {
  const wall = Date.now() - t0;
  const busy = records.reduce((sum, r) => sum + ((r.end ?? r.start) - r.start), 0);
  console.log(
    `\n=== [ci] | pool: ${jobs.length} jobs on ${lanes} lanes in ${seconds(wall)}s; lanes busy ${Math.round((100 * busy) / (lanes * Math.max(wall, 1)))} % (load ${load()})`,
  );
  console.log('=== [ci] |   start    took  lane  job');
  for (const r of records) {
    const mark = r.outcome === 'ok' ? '' : ` (${String(r.outcome).toUpperCase()})`;
    console.log(
      `=== [ci] | ${`+${seconds(r.start - t0)}s`.padStart(7)} ${`${seconds((r.end ?? r.start) - r.start)}s`.padStart(7)} ${String(r.lane).padStart(5)}  ${r.job.name}${mark}`,
    );
  }
  if (values.summary !== undefined) {
    const lines = records.map(
      (r) => `${seconds((r.end ?? r.start) - r.start)}\t${r.job.name}${r.outcome === 'ok' ? '' : ` (${String(r.outcome).toUpperCase()})`}`,
    );
    writeFileSync(values.summary, `${lines.join('\n')}\n`);
  }
  if (values.learned !== undefined) {
    const next = { ...learned };
    for (const r of records) if (r.outcome === 'ok' && r.end !== undefined) next[r.job.name] = Math.max(1, seconds(r.end - r.start));
    writeFileSync(`${values.learned}.tmp`, `${JSON.stringify(next, null, 2)}\n`);
    renameSync(`${values.learned}.tmp`, values.learned);
  }
  process.exitCode = [...ended.values()].every((o) => o === 'ok') ? 0 : 1;
}

// A stopped pool stops its jobs (each is a process group) and ends with the signal's status.
for (const [signal, status] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const) {
  process.on(signal, () => {
    for (const child of running.values()) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    process.exit(status);
  });
}

if (jobs.length === 0) finishPool();
else schedule();
