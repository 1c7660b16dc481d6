import { CairnError } from '../../errors/cairn-error.js';
import type { VersionStore } from '../../store/workflow-store.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import type { WorkflowRegistry } from '../workflow-registry.js';

/** `VERSION_RETIRED` for a start on `version` (or, `undefined`, on any version: every one is retired). */
export function versionRetired(workflow: string, version: string | undefined): CairnError {
  return version === undefined
    ? new CairnError(
        'VERSION_RETIRED',
        `Every version of workflow ${JSON.stringify(workflow)} is retired: it takes no new runs (make one active again with engine.versions.setStatus or \`cairn versions activate\`)`,
        { data: { workflow, version: null } },
      )
    : new CairnError(
        'VERSION_RETIRED',
        `Version ${JSON.stringify(version)} of workflow ${JSON.stringify(workflow)} is retired: it takes no new runs (its runs in flight go on)`,
        { data: { workflow, version } },
      );
}

/**
 * The definition a run started from outside any run (`startRun`, `forkRun`) uses, by the status
 * operators give versions (`engine.versions.setStatus`): `version` when given, unless it is
 * retired; else the version listed last in `createEngine({ workflows })` that is not retired. A
 * version no engine registered on the store counts as active. Throws `VERSION_RETIRED` when the
 * version asked for, or every version this engine has, is retired; the registry's errors
 * (`WORKFLOW_NOT_FOUND`, `VERSION_NOT_FOUND`, `INVALID_INPUT`) first. One store read (a
 * `versions.get`) when the version it would choose is active; a `versions.list` more when not.
 */
export async function definitionForStart(
  versions: VersionStore,
  registry: WorkflowRegistry,
  workflow: string,
  version?: string,
): Promise<AnyWorkflowDefinition> {
  const chosen = registry.forStart(workflow, version);
  if ((await versions.get(chosen.name, chosen.version))?.status !== 'retired') return chosen;
  if (version !== undefined) throw versionRetired(chosen.name, version);
  const retired = new Set((await versions.list(chosen.name)).filter((v) => v.status === 'retired').map((v) => v.version));
  const active = registry.versionsOf(chosen.name).filter((def) => !retired.has(def.version));
  const newest = active[active.length - 1];
  if (newest === undefined) throw versionRetired(chosen.name, undefined);
  return newest;
}
