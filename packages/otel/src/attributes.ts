/**
 * The attribute names `@cairn/otel` sets on spans and metrics. Cairn-specific (no OpenTelemetry
 * semantic convention covers durable workflows yet), under the `cairn.` namespace.
 */
export const CAIRN_ATTRIBUTES = {
  workflow: 'cairn.workflow',
  version: 'cairn.workflow.version',
  runId: 'cairn.run.id',
  stepKey: 'cairn.step.key',
  attempt: 'cairn.step.attempt',
  queued: 'cairn.step.queued',
  /** The store's name (`WorkflowStore.name`, e.g. `memory`, `kysely-postgres`, `redis`). */
  backend: 'cairn.backend',
  workerId: 'cairn.worker.id',
  /** How the execution or attempt ended: completed, failed, cancelled, suspended, lease-lost; succeeded, failed, retry. */
  outcome: 'cairn.outcome',
  /** Why a suspended execution waits (comma-separated: sleep, event, child, queued-step, retry, select, recheck, rate-limit, paused). */
  suspendReasons: 'cairn.suspend.reasons',
  /** Runs: `run`; steps: `step` (queue wait metric). */
  kind: 'cairn.kind',
  /** Final status of a finished run (runs finished metric). */
  status: 'cairn.run.status',
  /** Who paused a run or lifted its pause: `run` (engine.pause / resume) or `workflow` (pauseWorkflow / resumeWorkflow). */
  pauseScope: 'cairn.pause.scope',
} as const;
