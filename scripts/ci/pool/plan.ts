// The order of CI's test pool: which job a free lane takes next. Pure, so it is tested without
// starting anything (scripts/ci/test/pool-plan.test.ts).

/** One job of the pool: a command with the seconds it is expected to take and the jobs it waits for. */
export interface PoolJob {
  /** Unique name, printed in the log and the timing table. */
  name: string;
  /** The program and its arguments (no shell). */
  command: string[];
  /** Seconds the job took last time; only its order depends on it. */
  expectedSeconds: number;
  /** Names of jobs that must end successfully before this one starts. */
  after: string[];
  /** A file the job's output is appended to when it ends (several jobs may share one), besides its own log. */
  log?: string;
}

/** A job list the pool cannot run, with the reason. */
export class PoolPlanError extends Error {}

/**
 * Each job's priority: its expected seconds plus the longest chain of jobs that wait for it. A
 * free lane takes the ready job of highest priority, so the longest chain starts first and the
 * lanes end close together (longest-processing-time-first, extended to chains).
 */
export function priorities(jobs: readonly PoolJob[]): Map<string, number> {
  const byName = checkJobs(jobs);
  const dependents = new Map<string, string[]>();
  for (const job of jobs) for (const dep of job.after) dependents.set(dep, [...(dependents.get(dep) ?? []), job.name]);
  const memo = new Map<string, number>();
  const visit = (name: string): number => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const job = byName.get(name) as PoolJob;
    const tail = Math.max(0, ...(dependents.get(name) ?? []).map(visit));
    const value = job.expectedSeconds + tail;
    memo.set(name, value);
    return value;
  };
  for (const job of jobs) visit(job.name);
  return memo;
}

/** The jobs by name; throws on a duplicate name, an unknown dependency, a cycle or a bad duration. */
export function checkJobs(jobs: readonly PoolJob[]): Map<string, PoolJob> {
  const byName = new Map<string, PoolJob>();
  for (const job of jobs) {
    if (byName.has(job.name)) throw new PoolPlanError(`two jobs are named ${JSON.stringify(job.name)}`);
    if (job.command.length === 0) throw new PoolPlanError(`job ${JSON.stringify(job.name)} has no command`);
    if (!Number.isFinite(job.expectedSeconds) || job.expectedSeconds < 0) {
      throw new PoolPlanError(`job ${JSON.stringify(job.name)}: expectedSeconds must be a number >= 0 (got ${String(job.expectedSeconds)})`);
    }
    byName.set(job.name, job);
  }
  for (const job of jobs) {
    for (const dep of job.after)
      if (!byName.has(dep)) throw new PoolPlanError(`job ${JSON.stringify(job.name)} waits for an unknown job ${JSON.stringify(dep)}`);
  }
  // A cycle would leave its jobs waiting for ever: refuse it before anything starts.
  const state = new Map<string, 'visiting' | 'done'>();
  const walk = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new PoolPlanError(`jobs wait for each other: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    for (const dep of (byName.get(name) as PoolJob).after) walk(dep, [...path, name]);
    state.set(name, 'done');
  };
  for (const job of jobs) walk(job.name, []);
  return byName;
}

/** How a job ended; `skipped` when a job it waits for failed. */
export type JobOutcome = 'ok' | 'failed' | 'skipped';

/**
 * The next job a free lane takes: the ready job (not started, every job it waits for ended `ok`)
 * of highest priority, ties by the order of `jobs`; `undefined` when none is ready.
 */
export function nextJob(
  jobs: readonly PoolJob[],
  priority: ReadonlyMap<string, number>,
  started: ReadonlySet<string>,
  ended: ReadonlyMap<string, JobOutcome>,
): PoolJob | undefined {
  let best: PoolJob | undefined;
  for (const job of jobs) {
    if (started.has(job.name) || !job.after.every((dep) => ended.get(dep) === 'ok')) continue;
    if (best === undefined || (priority.get(job.name) ?? 0) > (priority.get(best.name) ?? 0)) best = job;
  }
  return best;
}

/** The jobs that can never start because a job they wait for (directly or not) did not end `ok`. */
export function blockedJobs(jobs: readonly PoolJob[], ended: ReadonlyMap<string, JobOutcome>): PoolJob[] {
  const blocked = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const job of jobs) {
      if (blocked.has(job.name) || ended.has(job.name)) continue;
      if (job.after.some((dep) => blocked.has(dep) || (ended.has(dep) && ended.get(dep) !== 'ok'))) {
        blocked.add(job.name);
        grew = true;
      }
    }
  }
  return jobs.filter((job) => blocked.has(job.name));
}
