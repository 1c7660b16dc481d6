// CI's test pool (scripts/ci/pool): the order a free lane takes jobs in, the job list .ci/run
// gives it, and the runner itself on small jobs (really two at a time, logs whole, failures and
// the jobs waiting for them reported).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { CONTAINER_RUNTIME, ciJobs, NODE22_INSTALL, tasksOfDryRun, UNKNOWN_SECONDS } from '../pool/ci-jobs.js';
import { blockedJobs, nextJob, priorities, PoolPlanError, type JobOutcome, type PoolJob } from '../pool/plan.js';

const MAIN = resolve(import.meta.dirname, '../pool/main.ts');
const work = mkdtempSync(join(tmpdir(), 'cairn-ci-pool-'));
after(() => rmSync(work, { recursive: true, force: true }));

const job = (name: string, expectedSeconds: number, after: string[] = [], command: string[] = ['true']): PoolJob => ({ name, command, expectedSeconds, after });

/** The order one lane takes `jobs` in when each ends `ok`. */
function order(jobs: PoolJob[]): string[] {
  const priority = priorities(jobs);
  const started = new Set<string>();
  const ended = new Map<string, JobOutcome>();
  const taken: string[] = [];
  for (let next = nextJob(jobs, priority, started, ended); next; next = nextJob(jobs, priority, started, ended)) {
    taken.push(next.name);
    started.add(next.name);
    ended.set(next.name, 'ok');
  }
  return taken;
}

describe('scripts/ci/pool/plan.ts', () => {
  it('takes the longest job first, ties in list order', () => {
    assert.deepEqual(order([job('short', 5), job('long', 300), job('mid', 60), job('mid too', 60)]), ['long', 'mid', 'mid too', 'short']);
  });

  it('counts the chain behind a job: a short install that long tests wait for goes before a longer lone job', () => {
    const jobs = [job('lone', 200), job('install', 5), job('tests', 180, ['install']), job('tiny', 1)];
    assert.equal(priorities(jobs).get('install'), 185);
    assert.deepEqual(order(jobs), ['lone', 'install', 'tests', 'tiny']);
  });

  it('starts a job only after every job it waits for ended ok', () => {
    const jobs = [job('a', 10), job('b', 100, ['a'])];
    const priority = priorities(jobs);
    assert.equal(nextJob(jobs, priority, new Set(['a']), new Map())?.name, undefined);
    assert.equal(nextJob(jobs, priority, new Set(['a']), new Map([['a', 'failed']])), undefined);
    assert.equal(nextJob(jobs, priority, new Set(['a']), new Map([['a', 'ok']]))?.name, 'b');
  });

  it('names the jobs that can never start because one they wait for (directly or not) failed', () => {
    const jobs = [job('a', 1), job('b', 1, ['a']), job('c', 1, ['b']), job('d', 1)];
    assert.deepEqual(
      blockedJobs(jobs, new Map([['a', 'failed']])).map((j) => j.name),
      ['b', 'c'],
    );
    assert.deepEqual(blockedJobs(jobs, new Map([['a', 'ok']])), []);
  });

  it('refuses duplicate names, unknown dependencies, cycles and bad durations', () => {
    assert.throws(() => priorities([job('a', 1), job('a', 2)]), PoolPlanError);
    assert.throws(() => priorities([job('a', 1, ['nope'])]), /unknown job "nope"/);
    assert.throws(() => priorities([job('a', 1, ['b']), job('b', 1, ['a'])]), /wait for each other: a -> b -> a/);
    assert.throws(() => priorities([job('a', Number.NaN)]), /expectedSeconds/);
    assert.throws(() => priorities([{ ...job('a', 1), command: [] }]), /no command/);
  });
});

describe('scripts/ci/pool/ci-jobs.ts', () => {
  const dry = {
    tasks: [
      { package: '@cairn/core', task: 'test', command: 'node --test' },
      { package: '@cairn/core', task: 'test:conformance', command: '<NONEXISTENT>' },
      { package: '@cairn/mongodb', task: 'test:conformance', command: 'node --test x' },
    ],
  };

  it('reads the tasks that run something from turbo’s dry run', () => {
    assert.deepEqual(tasksOfDryRun(dry), [
      { package: '@cairn/core', task: 'test' },
      { package: '@cairn/mongodb', task: 'test:conformance' },
    ]);
  });

  it('lists the container runtime, every Node 24 and Node 22 task (conformance tasks after the runtime, Node 22 tasks after their install), the release check and the bench smoke', () => {
    const jobs = ciJobs({
      node24: [...tasksOfDryRun(dry), { package: '@cairn/conformance', task: 'test' }],
      node22: [{ package: '@cairn/core', task: 'test:embedded' }],
      durations: { 'node24 @cairn/mongodb#test:conformance': 367, 'release check': 'soon' },
      testLog: '/logs/24',
      unitLog: '/logs/22',
    });
    assert.deepEqual(
      jobs.map((j) => [j.name, j.expectedSeconds, j.after, j.log]),
      [
        [CONTAINER_RUNTIME, UNKNOWN_SECONDS, [], undefined],
        ['node24 @cairn/core#test', UNKNOWN_SECONDS, [], '/logs/24'],
        ['node24 @cairn/mongodb#test:conformance', 367, [CONTAINER_RUNTIME], '/logs/24'],
        // The conformance package's tests start conformance runs in child processes.
        ['node24 @cairn/conformance#test', UNKNOWN_SECONDS, [CONTAINER_RUNTIME], '/logs/24'],
        [NODE22_INSTALL, UNKNOWN_SECONDS, [], undefined],
        ['node22 @cairn/core#test:embedded', UNKNOWN_SECONDS, [NODE22_INSTALL], '/logs/22'],
        ['release check', UNKNOWN_SECONDS, [], undefined],
        ['bench smoke', UNKNOWN_SECONDS, [], undefined],
      ],
    );
    // Each job calls a function of .ci/lib/pool.sh with the package and the task as its arguments.
    assert.deepEqual(jobs[2]?.command, ['bash', '-c', 'ci_pool_node24_task "$@"', 'ci_pool_node24_task', '@cairn/mongodb', 'test:conformance']);
    const poolSh = readFileSync(resolve(import.meta.dirname, '../../../.ci/lib/pool.sh'), 'utf8');
    for (const j of jobs) assert.match(poolSh, new RegExp(`^${j.command[3]}\\(\\) \\{`, 'm'), `${j.command[3]} is not defined in .ci/lib/pool.sh`);
  });

  it('names every job of durations.json that CI has (a renamed task would silently lose its place in the order)', () => {
    const durations = JSON.parse(readFileSync(resolve(import.meta.dirname, '../pool/durations.json'), 'utf8')) as Record<string, unknown>;
    const names = Object.keys(durations).filter((k) => k !== '//');
    for (const name of names)
      assert.match(
        name,
        /^(node24 @cairn\/[a-z0-9-]+#test(:conformance)?|node22 @cairn\/[a-z0-9-]+#test:embedded|node22 pnpm install \(own tree\)|container runtime \(docker\.io, private dockerd, images\)|release check|bench smoke)$/,
      );
    const rootScripts = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    assert.match(rootScripts.test ?? '', /^turbo run test test:conformance /);
    assert.match(rootScripts['test:unit'] ?? '', /^turbo run test:embedded /);
  });
});

describe('scripts/ci/pool/main.ts', () => {
  /** Runs the pool on `jobs` with two lanes; returns its exit status, output and summary lines. */
  function pool(name: string, jobs: PoolJob[], learned?: Record<string, number>) {
    const dir = join(work, name);
    const jobsFile = join(work, `${name}.json`);
    writeFileSync(jobsFile, JSON.stringify(jobs));
    const learnedFile = join(work, `${name}.learned.json`);
    if (learned) writeFileSync(learnedFile, JSON.stringify(learned));
    const summary = join(work, `${name}.tsv`);
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', MAIN, '--jobs', jobsFile, '--lanes', '2', '--dir', dir, '--summary', summary, '--learned', learnedFile],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    return {
      status: result.status,
      out: `${result.stdout}${result.stderr}`,
      summary: readFileSync(summary, 'utf8').trim().split('\n'),
      learned: JSON.parse(readFileSync(learnedFile, 'utf8')) as Record<string, number>,
    };
  }
  const sh = (script: string) => ['bash', '-c', script];

  it('runs two jobs at a time, longest first, each log whole and appended to its shared log', () => {
    const shared = join(work, 'shared.log');
    const marks = join(work, 'marks');
    // Each job records when it starts and ends; at most two may be inside at once.
    const body = (n: string) => sh(`echo "start ${n}" >> ${marks}; echo "${n} line 1"; sleep 0.3; echo "${n} line 2"; echo "end ${n}" >> ${marks}`);
    const jobs: PoolJob[] = ['a', 'b', 'c', 'd'].map((n, i) => ({ name: n, command: body(n), expectedSeconds: i, after: [], log: shared }));
    const { status, out, summary, learned } = pool('ok', jobs);
    assert.equal(status, 0, out);
    const events = readFileSync(marks, 'utf8').trim().split('\n');
    let inside = 0;
    let most = 0;
    for (const e of events) {
      inside += e.startsWith('start') ? 1 : -1;
      most = Math.max(most, inside);
    }
    assert.equal(most, 2, events.join('\n'));
    // Longest expected first: d and c start before b and a.
    assert.deepEqual(
      events
        .filter((e) => e.startsWith('start'))
        .slice(0, 2)
        .sort(),
      ['start c', 'start d'],
    );
    // The summary lists the jobs in the order they started.
    assert.deepEqual(
      summary.map((l) => l.split('\t')[1]),
      ['d', 'c', 'b', 'a'],
    );
    // Each job's lines stay together, in the shared log and in the pool's output.
    const log = readFileSync(shared, 'utf8');
    for (const n of ['a', 'b', 'c', 'd']) {
      assert.match(log, new RegExp(`${n} line 1\\n${n} line 2\\n`));
      assert.match(out, new RegExp(`=== \\[ci\\] \\| ${n}: output\\n${n} line 1\\n${n} line 2\\n=== \\[ci\\] \\| ${n}: ok in \\d+s`));
    }
    assert.deepEqual(Object.keys(learned).sort(), ['a', 'b', 'c', 'd']);
  });

  it('orders by the learned durations when it has them', () => {
    const jobs = ['x', 'y', 'z'].map((n) => job(n, 1));
    const { status, out } = pool('learned', jobs, { z: 50, y: 40 });
    assert.equal(status, 0, out);
    assert.deepEqual(
      [...out.matchAll(/=== \[ci\] \| started: (\w+) \(lane \d, expected ~(\d+)s/g)].map((m) => `${m[1]} ${m[2]}`),
      ['z 50', 'y 40', 'x 1'],
    );
  });

  it('fails when a job fails, skips the jobs waiting for it, runs the others, and names them in the summary', () => {
    const jobs = [job('broken', 3, [], sh('echo "why it broke"; exit 7')), job('needs broken', 1, ['broken']), job('independent', 2, [], sh('echo fine'))];
    const { status, out, summary, learned } = pool('failing', jobs);
    assert.equal(status, 1, out);
    assert.match(out, /=== \[ci\] \| broken: output\nwhy it broke\n=== \[ci\] \| broken: FAILED \(exit 7\)/);
    assert.match(out, /needs broken: SKIPPED/);
    assert.match(out, /independent: ok in/);
    assert.deepEqual(summary.map((l) => l.split('\t')[1]).sort(), ['broken (FAILED)', 'independent', 'needs broken (SKIPPED)']);
    assert.deepEqual(Object.keys(learned), ['independent']);
  });
});
