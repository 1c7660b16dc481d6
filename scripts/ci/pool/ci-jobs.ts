// The jobs of CI's test pool (.ci/run): the container runtime's set-up, every task `pnpm test`
// runs (Node 24), every task `pnpm test:unit` runs (Node 22, in its own tree), the release check
// and the bench smoke. The
// task lists come from turbo's own dry run of those commands, so a task added to `pnpm test` is in
// CI with nothing to edit here. Each job calls a function .ci/run exports (ci_pool_* there).
import type { PoolJob } from './plan.js';

/** One turbo task: its package and task name (`@cairn/core`, `test`). */
export interface TurboTask {
  package: string;
  task: string;
}

/** What `turbo run ... --dry=json` prints, as far as it is read here. */
export interface TurboDryRun {
  tasks: Array<{ package: string; task: string; command: string }>;
}

/** The tasks of a dry run that run something (turbo lists a package without the script as `<NONEXISTENT>`). */
export function tasksOfDryRun(dry: TurboDryRun): TurboTask[] {
  return dry.tasks.filter((t) => t.command !== '<NONEXISTENT>').map((t) => ({ package: t.package, task: t.task }));
}

/** Inputs of `ciJobs`. */
export interface CiJobsInput {
  /** Tasks of `pnpm test` (Node 24, in the checkout). */
  node24: readonly TurboTask[];
  /** Tasks of `pnpm test:unit` (Node 22, in the Node 22 tree). */
  node22: readonly TurboTask[];
  /** Seconds per job name (durations.json); a job not listed counts as `unknownSeconds`. */
  durations: Readonly<Record<string, unknown>>;
  /** The log the Node 24 tasks' output is appended to, and the Node 22 tasks'. */
  testLog: string;
  unitLog: string;
}

/** A job not in the durations table counts this long: early enough not to end last by surprise. */
export const UNKNOWN_SECONDS = 60;

/** Name of the job that installs the Node 22 tree; every Node 22 task waits for it. */
export const NODE22_INSTALL = 'node22 pnpm install (own tree)';

/** Name of the job that sets up the container runtime (docker.io, the private dockerd, the images). */
export const CONTAINER_RUNTIME = 'container runtime (docker.io, private dockerd, images)';

/**
 * Whether a Node 24 task needs the container runtime: every `test:conformance` (its server
 * backends come from Testcontainers in CI), and every task of the conformance package itself (its
 * tests start conformance runs in child processes). The other tests use local servers.
 */
export function needsContainers(task: TurboTask): boolean {
  return task.task === 'test:conformance' || task.package === '@cairn/conformance';
}

/** The pool's jobs: the container runtime, one per turbo task and Node version, the Node 22 install, the release check, the bench smoke. */
export function ciJobs(input: CiJobsInput): PoolJob[] {
  const seconds = (name: string) => {
    const value = input.durations[name];
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : UNKNOWN_SECONDS;
  };
  const job = (name: string, fn: string, args: string[], extra: Partial<PoolJob> = {}): PoolJob => ({
    name,
    command: ['bash', '-c', `${fn} "$@"`, fn, ...args],
    expectedSeconds: seconds(name),
    after: [],
    ...extra,
  });
  return [
    // On a cold machine this installs packages and builds images for minutes: the tests that need
    // no container run meanwhile.
    job(CONTAINER_RUNTIME, 'ci_pool_container_runtime', []),
    ...input.node24.map((t) =>
      job(`node24 ${t.package}#${t.task}`, 'ci_pool_node24_task', [t.package, t.task], {
        log: input.testLog,
        after: needsContainers(t) ? [CONTAINER_RUNTIME] : [],
      }),
    ),
    job(NODE22_INSTALL, 'ci_pool_node22_install', []),
    ...input.node22.map((t) =>
      job(`node22 ${t.package}#${t.task}`, 'ci_pool_node22_task', [t.package, t.task], { log: input.unitLog, after: [NODE22_INSTALL] }),
    ),
    job('release check', 'ci_pool_release_check', []),
    job('bench smoke', 'ci_pool_bench_smoke', []),
  ];
}
