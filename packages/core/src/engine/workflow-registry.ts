import { CairnError } from '../errors/cairn-error.js';
import { IDENTIFIER_LIMITS, checkIdentifier, invalidInput } from './check-input.js';
import type { AnyWorkflowDefinition } from './define/any-workflow-definition.js';

// The registry holds workflows with different input and output types side by side, and hands each
// one back to code that only passes it inputs it stored as JSON.

/**
 * The workflows an engine knows, by name and version. New runs start on the version listed last
 * for a name; a run replays on the version it started with.
 */
export class WorkflowRegistry {
  private readonly byName = new Map<string, Map<string, AnyWorkflowDefinition>>();
  private readonly current_ = new Map<string, AnyWorkflowDefinition>();

  /** Throws `INVALID_INPUT` for anything in `definitions` that `defineWorkflow` would not have made. */
  constructor(definitions: readonly AnyWorkflowDefinition[]) {
    if (!Array.isArray(definitions)) throw invalidInput('createEngine workflows', 'must be an array of workflow definitions', definitions);
    for (const def of definitions) {
      // Definitions built by hand (not by defineWorkflow) get the same checks.
      if (typeof def !== 'object' || def === null || typeof def.handler !== 'function') {
        throw invalidInput('createEngine workflows', 'must hold definitions made by defineWorkflow', def);
      }
      checkIdentifier('Workflow name', def.name, IDENTIFIER_LIMITS.workflowName);
      checkIdentifier(`Workflow ${JSON.stringify(def.name)} version`, def.version, IDENTIFIER_LIMITS.version);
      const versions = this.byName.get(def.name) ?? new Map<string, AnyWorkflowDefinition>();
      if (versions.has(def.version)) {
        throw new CairnError('INVALID_INPUT', `Workflow ${JSON.stringify(def.name)} version ${JSON.stringify(def.version)} is registered twice`);
      }
      versions.set(def.version, def);
      this.byName.set(def.name, versions);
      this.current_.set(def.name, def);
    }
  }

  /** Every definition, every version. */
  all(): AnyWorkflowDefinition[] {
    return [...this.byName.values()].flatMap((versions) => [...versions.values()]);
  }

  /** Workflow names. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The exact (name, version), or `undefined` (e.g. a run started by a newer deploy). */
  find(name: string, version: string): AnyWorkflowDefinition | undefined {
    return this.byName.get(name)?.get(version);
  }

  /** Every registered version of `name`, in the order `createEngine({ workflows })` listed them; `[]` for an unknown name. */
  versionsOf(name: string): AnyWorkflowDefinition[] {
    return [...(this.byName.get(name)?.values() ?? [])];
  }

  /** The version new runs of `name` start on when none is retired (the one listed last), if the workflow is registered. */
  current(name: string): AnyWorkflowDefinition | undefined {
    return this.current_.get(name);
  }

  /**
   * The definition new runs use: `version` if given, else the current one. Throws
   * `INVALID_INPUT` for a name or version that is not an identifier, `WORKFLOW_NOT_FOUND` /
   * `VERSION_NOT_FOUND` for one that is not registered.
   */
  forStart(name: string, version?: string): AnyWorkflowDefinition {
    // Callers check their own arguments; this keeps a non-string or malformed name (ctx.child's
    // too) from ever being reported as merely unknown.
    checkIdentifier('workflow name', name, IDENTIFIER_LIMITS.workflowName);
    if (version !== undefined) checkIdentifier('workflow version', version, IDENTIFIER_LIMITS.version);
    const versions = this.byName.get(name);
    if (!versions) {
      throw new CairnError('WORKFLOW_NOT_FOUND', `Unknown workflow ${JSON.stringify(name)}; register it in createEngine({ workflows })`, {
        data: { workflow: name },
      });
    }
    if (version === undefined) return this.current_.get(name) as AnyWorkflowDefinition;
    const def = versions.get(version);
    if (!def) {
      throw new CairnError('VERSION_NOT_FOUND', `Workflow ${JSON.stringify(name)} has no registered version ${JSON.stringify(version)}`, {
        data: { workflow: name, version },
      });
    }
    return def;
  }
}
