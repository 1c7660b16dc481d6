import type { RunSummary } from '../../../model/run.js';
import type { VersionRecord } from '../../../model/version.js';
import type { DoctorFinding } from '../../../store/store-doctor.js';
import type { DoctorContext } from './doctor-context.js';

/**
 * How far apart the registrations of one engine start may be: `start()` upserts its versions one
 * after the other, so they differ by milliseconds, or by longer when the store was slow to answer.
 */
export const REGISTRATION_SPREAD_MS = 60_000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Runs pinned to a version no live worker may have. A version is registered by every engine
 * `start()` that has it (`versions.upsert` refreshes its `updatedAt`), so the versions store tells
 * which versions the engines started on this store knew, and when they last started:
 *
 * - `version-unregistered` (error): no engine ever registered the run's (workflow, version) here.
 *   No worker can execute the run (one without the version steps aside and retries every lease).
 * - `version-superseded` (warning): the version was registered, but a later engine start
 *   (more than `REGISTRATION_SPREAD_MS` later) registered other versions of the workflow and not
 *   this one: the newest deploy dropped it. Unless an older worker still runs, the run is stuck.
 *
 * One `versions.list` per workflow of the active runs read. Not fixable: deploying the code is.
 */
export async function checkUnregisteredVersions(ctx: DoctorContext): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  const versions = new Map<string, Promise<VersionRecord[]>>();
  for (const run of await ctx.activeRuns()) {
    let list = versions.get(run.workflow);
    if (!list) {
      list = ctx.store.versions.list(run.workflow);
      versions.set(run.workflow, list);
    }
    const finding = judge(run, await list);
    if (finding) findings.push(finding);
  }
  return findings;
}

function judge(run: RunSummary, registered: VersionRecord[]): DoctorFinding | undefined {
  const mine = registered.find((v) => v.version === run.version);
  const pinned = `${run.workflow}@${run.version}`;
  if (!mine) {
    return {
      code: 'version-unregistered',
      severity: 'error',
      runId: run.id,
      message:
        `Run ${run.id} is pinned to ${pinned}, which no engine has ever registered on this store` +
        (registered.length > 0 ? ` (registered: ${registered.map((v) => v.version).join(', ')})` : '') +
        `: no worker will execute it. Start a worker whose workflows include version ${JSON.stringify(run.version)}, or cancel the run.`,
      fixable: false,
    };
  }
  const latest = registered.reduce((a, b) => (b.updatedAt > a.updatedAt ? b : a));
  if (latest.updatedAt - mine.updatedAt <= REGISTRATION_SPREAD_MS) return undefined;
  return {
    code: 'version-superseded',
    severity: 'warning',
    runId: run.id,
    message:
      `Run ${run.id} is pinned to ${pinned}, last registered by an engine start at ${iso(mine.updatedAt)}; an engine started since ` +
      `(at ${iso(latest.updatedAt)}) registered ${JSON.stringify(latest.version)} but not ${JSON.stringify(run.version)}. If no worker still runs the code of ` +
      `${JSON.stringify(run.version)}, this run never progresses: keep that version in a running worker's workflows until its runs end.`,
    fixable: false,
  };
}
