import type { PauseScope } from '../model/pause.js';
/**
 * The lifecycle events an engine publishes on `node:diagnostics_channel`. Subscribe with
 * `diagnostics_channel.subscribe(CAIRN_CHANNELS.run, (message) => …)`; nothing needs patching, and
 * nothing is built while no one subscribes (the engine checks `channel.hasSubscribers` first).
 *
 * Guarantees of every message: it is a fresh plain object, published synchronously in the engine's
 * code path, in the order things happened within one run on one worker. It never carries an input,
 * output, event payload or state value. A subscriber that throws does not disturb the engine
 * (`diagnostics_channel` reports the error on `process` instead). Times are the engine clock's
 * epoch milliseconds. Events are observations, not records: a crash can lose the event of a
 * transition that was written, and a write that failed (a lost lease) emits none.
 */

/** The channel names, one per family of events. */
export const CAIRN_CHANNELS = {
  /** `RunLifecycleEvent`s: created, started, resumed, suspended, completed, failed, cancelled, lease lost. */
  run: 'cairn:run',
  /** `StepLifecycleEvent`s: attempts of task steps (inline and queued) and compensations. */
  step: 'cairn:step',
  /** `RecoveryLifecycleEvent`s: what the recovery loop dispatched, and why. */
  recovery: 'cairn:recovery',
} as const;

/** What every run and step message carries. */
export interface LifecycleBase {
  runId: string;
  workflow: string;
  /** The workflow version the run is pinned to. */
  version: string;
  /** The worker (engine) that publishes the event. */
  workerId: string;
  /** The store's name (`WorkflowStore.name`, e.g. `memory`, `kysely-postgres`, `redis`). */
  store: string;
  /** When it happened (engine clock, epoch ms). */
  at: number;
  /**
   * The W3C trace context stored with the run (`traceparent`, optionally `tracestate`), when the
   * code that started it had one: what a tracer continues.
   */
  traceContext?: Record<string, string>;
}

/** An error as events carry it: never the error object itself (it may hold payload). */
export interface LifecycleError {
  name: string;
  message: string;
  code?: string;
}

/**
 * Why a run stopped executing without ending. A run waiting on several branches lists each once.
 * `paused`: the run was paused (`engine.pause`, `engine.pauseWorkflow`) while it executed.
 * `budget`: the push it executed in (`engine.pushed.executeOnce`) neared its time budget; the run
 * is due again at once.
 */
export type SuspendReason = 'sleep' | 'event' | 'child' | 'queued-step' | 'retry' | 'select' | 'recheck' | 'rate-limit' | 'paused' | 'budget';

export type RunLifecycleEvent =
  | (LifecycleBase & {
      type: 'run.created';
      /** The run that started it (`ctx.child`, `ctx.startChild`, `continueAsNew`, a select's child), if any. */
      parentRunId?: string;
      createdAt: number;
    })
  | (LifecycleBase & {
      /** Claimed for the first time (fence 1), or again (`run.resumed`) after a suspension or a lost worker. */
      type: 'run.started' | 'run.resumed';
      fence: number;
      createdAt: number;
      /** `at - createdAt` for `run.started`: how long the run waited for a worker. */
      queueWaitMs?: number;
      /**
       * Set by a subscriber, not by the engine: the trace context of the span it opened for this
       * execution. The engine reads it back after publishing and hands it on, instead of the run's
       * own, to the runs this execution starts and to the queued steps it dispatches (in their
       * jobs), so they nest under that span. The only field a subscriber may write.
       */
      executionTraceContext?: Record<string, string>;
    })
  | (LifecycleBase & {
      type: 'run.suspended';
      fence: number;
      reasons: SuspendReason[];
      /** When it wakes by itself (a timer, a retry, a backstop); absent when only news wakes it. */
      wakeAt?: number;
      /** How long this execution held the run (claim to suspension). */
      durationMs: number;
    })
  | (LifecycleBase & {
      type: 'run.completed' | 'run.failed' | 'run.cancelled';
      fence: number;
      /** This execution, claim to end. */
      durationMs: number;
      /** Creation to end. */
      totalMs: number;
      createdAt: number;
      error?: LifecycleError;
    })
  | (LifecycleBase & {
      /**
       * The run was paused (`run.paused`) or its pause lifted (`run.unpaused`) by this engine:
       * published by the engine that wrote it, once per change (a repeat that writes nothing
       * publishes nothing). `scope`: who paused it or lifted the pause (`run`: `engine.pause` /
       * `engine.resume`; `workflow`: `engine.pauseWorkflow` / `engine.resumeWorkflow`, and the
       * pause of a run first claimed while its workflow is paused).
       */
      type: 'run.paused' | 'run.unpaused';
      scope: PauseScope;
      /** The reason the pause carries (`run.paused` only), when one was given. */
      reason?: string;
    })
  | (LifecycleBase & {
      /** This worker lost the run (another claimed it, or the lease ran out): the execution was abandoned. */
      type: 'run.lease-lost';
      fence: number;
      error: LifecycleError;
    });

/** A step's place: its key (`name`, `name#2`, `name:compensate`) and attempt. */
export interface StepBase extends LifecycleBase {
  stepKey: string;
  attempt: number;
  /** Ran on the step queue (a `queued: true` step) rather than inline in the run's execution. */
  queued: boolean;
}

export type StepLifecycleEvent =
  | (StepBase & {
      type: 'step.started';
      /** For a queued attempt: from its dispatch (the scheduled record) to its start. */
      queueWaitMs?: number;
    })
  | (StepBase & { type: 'step.succeeded'; durationMs: number })
  | (StepBase & { type: 'step.failed'; durationMs: number; error: LifecycleError })
  | (StepBase & {
      /** The attempt failed and another is due at `wakeAt` (after `delayMs`). */
      type: 'step.retry-scheduled';
      durationMs: number;
      error: LifecycleError;
      delayMs: number;
      wakeAt: number;
    })
  | (StepBase & {
      /** The step's compensation ended: `ok` false when it failed for good. `stepKey` is the compensated step's. */
      type: 'step.compensated';
      ok: boolean;
    });

export interface RecoveryLifecycleEvent {
  type: 'recovery.dispatched';
  runId: string;
  workflow: string;
  /** Its timer passed (`wake`) or its worker's lease expired (`lease-expired`). */
  reason: 'wake' | 'lease-expired';
  workerId: string;
  at: number;
}

/** Every message on the three channels. */
export type CairnLifecycleEvent = RunLifecycleEvent | StepLifecycleEvent | RecoveryLifecycleEvent;
