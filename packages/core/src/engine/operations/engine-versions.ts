import type { Clock } from '../../clock/clock.js';
import { invalidInput } from '../../errors/invalid-input.js';
import type { Json } from '../../model/json.js';
import type { RunStatus } from '../../model/run.js';
import type { VersionRecord, VersionStatus } from '../../model/version.js';
import type { WorkflowStore } from '../../store/workflow-store.js';
import { checkIdentifier, checkOptions, IDENTIFIER_LIMITS } from '../check-input.js';

/** One version of a workflow in `engine.versions.summary`. */
export interface VersionSummary {
  workflow: string;
  version: string;
  /** The stored status; `unregistered` for a version runs are pinned to that no engine registered on this store. */
  status: VersionStatus | 'unregistered';
  /** The stored descriptor, first registration and last change (`null` when unregistered). */
  descriptor: Json;
  createdAt: number | null;
  updatedAt: number | null;
  /** Runs pinned to the version that are not terminal (pending, running, waiting), of those read. */
  inFlight: number;
  /** The oldest of them (by `createdAt`), of those read; `null` when none. */
  oldestInFlight: { runId: string; createdAt: number } | null;
}

/** `engine.versions.summary`: every version of a workflow with its runs in flight. */
export interface VersionsSummary {
  workflow: string;
  /** When the runs were read (the engine's clock): an age is `readAt - createdAt`. */
  readAt: number;
  /** Registered versions oldest registration first, then unregistered versions that have runs in flight. */
  versions: VersionSummary[];
  /** How many runs in flight were read. */
  runsRead: number;
  /**
   * True when more than `maxRuns` runs are in flight: only the newest `maxRuns` were read, so the
   * counts are lower bounds and an older run in flight may exist.
   */
  truncated: boolean;
}

/** Options of `engine.versions.summary`. */
export interface VersionsSummaryOptions {
  /** Read at most this many runs in flight, newest first (1..100000, default 10000). */
  maxRuns?: number;
}

const IN_FLIGHT: RunStatus[] = ['pending', 'running', 'waiting'];
/** The default and the largest `maxRuns`: the summary stays a bounded read. */
export const SUMMARY_MAX_RUNS = { default: 10_000, max: 100_000 } as const;
// The store's largest page.
const PAGE = 1000;

/**
 * `engine.versions`: the workflow versions the engines started on this store registered (each
 * `start()` upserts the versions it runs), for operators. Works without `start()` and without the
 * workflows' code, so a CLI can use it. Arguments are checked before anything is read or written
 * (`INVALID_INPUT`, nothing changed).
 */
export interface EngineVersions {
  /** Every registered version of `workflow`, oldest registration first; `[]` for a workflow never registered. */
  list(workflow: string): Promise<VersionRecord[]>;
  /** One registered version, or `undefined`. */
  get(workflow: string, version: string): Promise<VersionRecord | undefined>;
  /**
   * Marks a version `retired` or `active` again, and returns it. A retired version takes no new
   * runs: `startRun` and `forkRun` go to the newest version that is not retired (or refuse with
   * `VERSION_RETIRED` when there is none, or when it was asked for by name). Runs pinned to it go
   * on as before, and so do the runs they start themselves (children, continue-as-new); an engine
   * starting with the version keeps the status. Idempotent. `VERSION_NOT_FOUND` when no engine
   * registered it; nothing is created.
   */
  setStatus(workflow: string, version: string, status: VersionStatus): Promise<VersionRecord>;
  /**
   * Every version of `workflow` with its status, how many of its runs are in flight (not terminal)
   * and the oldest of them: the registered versions, then any version runs are pinned to that no
   * engine registered. Reads the workflow's runs in flight newest first through `runs.list` (its
   * workflow and status filters, pages of 1000), at most `maxRuns` of them (`truncated` says when
   * more exist), and one `versions.list`. Read only.
   */
  summary(workflow: string, options?: VersionsSummaryOptions): Promise<VersionsSummary>;
}

const STATUSES: readonly VersionStatus[] = ['active', 'retired'];

/** `engine.versions` over `store`, stamping changes with `clock`. */
export function createEngineVersions(deps: { store: WorkflowStore; clock: Clock }): EngineVersions {
  const workflowName = (method: string, value: unknown) => checkIdentifier(`versions.${method} workflow`, value, IDENTIFIER_LIMITS.workflowName);
  const versionName = (method: string, value: unknown) => checkIdentifier(`versions.${method} version`, value, IDENTIFIER_LIMITS.version);
  return {
    async list(workflow) {
      return deps.store.versions.list(workflowName('list', workflow));
    },
    async get(workflow, version) {
      return deps.store.versions.get(workflowName('get', workflow), versionName('get', version));
    },
    async setStatus(workflow, version, status) {
      const name = workflowName('setStatus', workflow);
      const checked = versionName('setStatus', version);
      if (!STATUSES.includes(status)) throw invalidInput('versions.setStatus status', `must be ${STATUSES.map((s) => `'${s}'`).join(' or ')}`, status);
      return deps.store.versions.setStatus(name, checked, status, deps.clock.now());
    },
    async summary(workflow, rawOptions) {
      const name = workflowName('summary', workflow);
      const options = checkOptions('versions.summary options', rawOptions, ['maxRuns']) as VersionsSummaryOptions;
      const maxRuns = options.maxRuns ?? SUMMARY_MAX_RUNS.default;
      if (typeof maxRuns !== 'number' || !Number.isInteger(maxRuns) || maxRuns < 1 || maxRuns > SUMMARY_MAX_RUNS.max) {
        throw invalidInput('versions.summary maxRuns', `must be an integer from 1 to ${SUMMARY_MAX_RUNS.max}`, maxRuns);
      }
      const readAt = deps.clock.now();
      const registered = await deps.store.versions.list(name);
      const rows = new Map<string, VersionSummary>();
      for (const v of registered) {
        rows.set(v.version, { ...v, inFlight: 0, oldestInFlight: null });
      }
      let runsRead = 0;
      let cursor: string | undefined;
      do {
        const page = await deps.store.runs.list({
          workflow: name,
          status: IN_FLIGHT,
          limit: Math.min(PAGE, maxRuns - runsRead),
          ...(cursor === undefined ? {} : { cursor }),
        });
        for (const run of page.runs) {
          let row = rows.get(run.version);
          if (!row) {
            row = {
              workflow: name,
              version: run.version,
              status: 'unregistered',
              descriptor: null,
              createdAt: null,
              updatedAt: null,
              inFlight: 0,
              oldestInFlight: null,
            };
            rows.set(run.version, row);
          }
          row.inFlight += 1;
          // Newest first, so the last one seen is the oldest; compared anyway (one millisecond holds several runs).
          if (row.oldestInFlight === null || run.createdAt <= row.oldestInFlight.createdAt) row.oldestInFlight = { runId: run.id, createdAt: run.createdAt };
        }
        runsRead += page.runs.length;
        cursor = page.nextCursor;
      } while (cursor !== undefined && runsRead < maxRuns);
      // Whether a run is left unread: a full last page may end exactly at the last run.
      const truncated = cursor !== undefined && (await deps.store.runs.list({ workflow: name, status: IN_FLIGHT, limit: 1, cursor })).runs.length > 0;
      return { workflow: name, readAt, versions: [...rows.values()], runsRead, truncated };
    },
  };
}
