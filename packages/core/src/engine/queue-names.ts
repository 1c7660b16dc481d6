import { CairnError } from '../errors/cairn-error.js';

/** How workflows map onto queues. */
export type QueueStrategy = 'per-workflow' | 'shared-groups';

/** The two queues a workflow uses. */
export interface WorkflowQueues {
  orchestrator: string;
  step: string;
}

// Queue backends restrict names (pg-boss: letters, digits, `-`, `_`, `.`, `/`); anything else is
// replaced, which is why two workflow names can collide and must be checked.
const sanitise = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * The one function that computes queue names. `per-workflow`: `wf-orchestrator-<name>` and
 * `wf-step-<name>` per workflow; `shared-groups`: `wf-orchestrator` and `wf-step` for all. Throws
 * `QUEUE_NAME_COLLISION` when two distinct workflow names map to the same queue.
 */
export function computeQueueNames(strategy: QueueStrategy, workflowNames: Iterable<string>, prefix = ''): Map<string, WorkflowQueues> {
  const result = new Map<string, WorkflowQueues>();
  const owners = new Map<string, string>();
  for (const name of workflowNames) {
    if (result.has(name)) continue;
    const queues =
      strategy === 'shared-groups'
        ? { orchestrator: `${prefix}wf-orchestrator`, step: `${prefix}wf-step` }
        : { orchestrator: `${prefix}wf-orchestrator-${sanitise(name)}`, step: `${prefix}wf-step-${sanitise(name)}` };
    if (strategy === 'per-workflow') {
      const owner = owners.get(queues.orchestrator);
      if (owner !== undefined) {
        throw new CairnError(
          'QUEUE_NAME_COLLISION',
          `Workflows ${JSON.stringify(owner)} and ${JSON.stringify(name)} map to the same queue ${queues.orchestrator}; rename one`,
          {
            data: { workflows: [owner, name], queue: queues.orchestrator },
          },
        );
      }
      owners.set(queues.orchestrator, name);
    }
    result.set(name, queues);
  }
  return result;
}
