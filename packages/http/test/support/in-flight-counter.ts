// Counts the pushes a handler is executing at once, per workflow: wraps the handler, reads the
// unit from each request's body (a run push names its run, told with `name`; a step push its job's
// workflow) and keeps the highest count seen.
import type { FetchHandler, PushUnit } from '@cairn/http';

export interface InFlightCounter {
  wrap(handler: FetchHandler): FetchHandler;
  /** Tells which workflow a run belongs to. */
  name(runId: string, workflow: string): void;
  /** The most pushes of `workflow` executing at once since the last reset. */
  max(workflow: string): number;
  reset(): void;
}

export function inFlightCounter(): InFlightCounter {
  const workflows = new Map<string, string>();
  const now = new Map<string, number>();
  const most = new Map<string, number>();
  return {
    wrap: (handler) => async (request) => {
      let workflow: string | undefined;
      try {
        const unit = (await request.clone().json()) as PushUnit;
        workflow = unit.kind === 'run' ? workflows.get(unit.runId) : unit.kind === 'step' ? unit.job.workflow : undefined;
      } catch {
        // Not a push the counter knows: the handler refuses it.
      }
      if (workflow === undefined) return handler(request);
      const count = (now.get(workflow) ?? 0) + 1;
      now.set(workflow, count);
      most.set(workflow, Math.max(most.get(workflow) ?? 0, count));
      try {
        return await handler(request);
      } finally {
        now.set(workflow, (now.get(workflow) ?? 1) - 1);
      }
    },
    name: (runId, workflow) => void workflows.set(runId, workflow),
    max: (workflow) => most.get(workflow) ?? 0,
    reset: () => {
      now.clear();
      most.clear();
    },
  };
}
