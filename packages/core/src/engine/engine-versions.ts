import type { Clock } from '../clock/clock.js';
import { invalidInput } from '../errors/invalid-input.js';
import type { VersionRecord, VersionStatus } from '../model/version.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { checkIdentifier, IDENTIFIER_LIMITS } from './check-input.js';

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
   * Marks a version `retired` or `active` again, and returns it. A retired version is never the one
   * a fork made without the workflow's code (the CLI) chooses: it takes the newest active version.
   * Runs pinned to a retired version go on as before, and an engine starting with the version keeps
   * the status. Idempotent. `VERSION_NOT_FOUND` when no engine registered it; nothing is created.
   */
  setStatus(workflow: string, version: string, status: VersionStatus): Promise<VersionRecord>;
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
  };
}
