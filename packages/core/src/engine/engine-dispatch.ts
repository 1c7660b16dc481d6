// How runs and queued steps reach workers: which queue, which job group, which priority, which
// dedupe key, or a signal through the store when the store is the queue between processes
// (decision 34). Kept apart from `createEngine` because it is the one place where the queue-side
// flow control (group caps, priorities) meets the engine: everything else calls `dispatchRun` and
// `dispatchStep` and needs to know none of it.
import type { Clock } from '../clock/clock.js';
import { CairnError } from '../errors/cairn-error.js';
import type { Json } from '../model/json.js';
import type { Queue } from '../queue/queue.js';
import type { DispatchedRun } from './engine-runtime.js';
import type { StepJob } from './execution/step-job.js';
import { computeQueueNames, type QueueStrategy, type WorkflowQueues } from './queue-names.js';
import type { StoreWakeups } from './wakeups/store-wakeups.js';
import type { WorkflowRegistry } from './workflow-registry.js';

/** What `createDispatch` wires together. */
export interface DispatchParts {
  readonly queue: Queue;
  readonly strategy: QueueStrategy;
  readonly prefix: string;
  /** The registered workflows' queues, computed when the options were checked; extended here for others. */
  readonly queueNames: Map<string, WorkflowQueues>;
  readonly registry: WorkflowRegistry;
  readonly clock: Clock;
  readonly wakeups: StoreWakeups;
  /** True while runs go to other processes through the store instead of the queue (an engine without workers over its own local queue). */
  readonly throughStore: () => boolean;
}

/** The engine's two ways of sending work, and the queue names they use. */
export interface Dispatch {
  /**
   * Sends the run's orchestrator job (delayed by `delayMs` if given), in the workflow's job group
   * under `shared-groups`, at the run's priority where the queue has priorities, deduplicated per
   * run and due time; or signals it through the store (a delayed one needs no signal: the store
   * holds its wake time). Rejects with `QUEUE_ERROR` when the queue refuses.
   */
  dispatchRun(run: DispatchedRun, delayMs?: number): Promise<void>;
  /** Sends a queued step's job, grouped and prioritised as a run's, deduplicated per attempt. */
  dispatchStep(job: StepJob, delayMs?: number): Promise<void>;
  /** The two queues of a workflow (computed once per name, also for workflows not registered here). */
  queuesFor(workflow: string): WorkflowQueues;
}

/** Builds the engine's dispatch over its queue (see `Dispatch`). */
export function createDispatch(parts: DispatchParts): Dispatch {
  const { queue, strategy, prefix, queueNames: names, registry, clock, wakeups, throughStore } = parts;
  const queuesFor = (workflow: string): WorkflowQueues => {
    let queues = names.get(workflow);
    if (!queues) {
      queues = computeQueueNames(strategy, [workflow], prefix).get(workflow) as WorkflowQueues;
      names.set(workflow, queues);
    }
    return queues;
  };
  const groupOf = (workflow: string) => {
    const tier = registry.current(workflow)?.options.tier;
    return strategy === 'shared-groups' ? { group: tier === undefined ? { id: workflow } : { id: workflow, tier } } : {};
  };
  // A queue without priorities is sent none (it would refuse or ignore them); 0 is the default.
  const priorityOf = (priority: number | undefined) => (priority === undefined || priority === 0 || !queue.capabilities.priority ? {} : { priority });
  const send = async (name: string, payload: Json, sendOptions: object) => {
    try {
      await queue.send(name, payload, sendOptions);
    } catch (error) {
      if (CairnError.is(error)) throw error;
      throw new CairnError('QUEUE_ERROR', `Queue ${queue.name}: send to ${name} failed`, { cause: error });
    }
  };
  return {
    queuesFor,
    dispatchRun: ({ id: runId, workflow, priority }, delayMs) => {
      // A delayed dispatch needs no signal: the store holds the wake time, and a worker's recovery
      // pass dispatches the run when it is due.
      if (throughStore()) return delayMs !== undefined && delayMs > 0 ? Promise.resolve() : wakeups.signal(runId, workflow);
      return send(
        queuesFor(workflow).orchestrator,
        { runId },
        {
          ...groupOf(workflow),
          ...priorityOf(priority),
          ...(delayMs !== undefined && delayMs > 0
            ? { delayMs, dedupeKey: `run:${runId}:at:${Math.round(clock.now() + delayMs)}` }
            : { dedupeKey: `run:${runId}:now` }),
        },
      );
    },
    dispatchStep: (job, delayMs) =>
      send(queuesFor(job.workflow).step, job as unknown as Json, {
        ...groupOf(job.workflow),
        ...priorityOf(job.priority),
        ...(delayMs !== undefined && delayMs > 0 ? { delayMs } : {}),
        dedupeKey: `step:${job.runId}:${job.key}:${job.attempt}`,
      }),
  };
}
