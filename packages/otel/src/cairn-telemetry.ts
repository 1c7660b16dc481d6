import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  type Attributes,
  type MeterProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  context,
  metrics,
  trace,
} from '@opentelemetry/api';
import { CAIRN_CHANNELS, type RunLifecycleEvent, type StepLifecycleEvent } from '@cairn/core';
import type { LifecycleBase } from '@cairn/core/backend';
import { CAIRN_ATTRIBUTES as A } from './attributes.js';
import { fromCarrier, toCarrier } from './w3c-carrier.js';

/** Options of `cairnTelemetry`. */
export interface CairnTelemetryOptions {
  /** Default: the global tracer provider (`trace.getTracerProvider()`), set by your SDK. */
  tracerProvider?: TracerProvider;
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
}

/** What `cairnTelemetry` returns. */
export interface CairnTelemetry {
  /**
   * The W3C carrier of the span active where it is called: pass it as `createEngine({ traceContext })`
   * so each `startRun` stores its caller's context with the run.
   */
  readonly traceContext: () => Record<string, string> | undefined;
  /** Stops listening; spans still open are ended (outcome `abandoned`). */
  close(): void;
}

const NAME = '@cairn/otel';

/**
 * Turns Cairn's lifecycle events (`node:diagnostics_channel`) into OpenTelemetry spans and
 * metrics, in this process, from now until `close()`:
 *
 * - a span `cairn.run <workflow>` per execution of a run (claim to suspension or end), child of
 *   the context stored with the run (`RunRecord.traceContext`: the caller of `startRun`, or for a
 *   child run the parent's execution span);
 * - a span `cairn.step <key>` per attempt of a task step, child of the execution span (inline) or
 *   of the execution that dispatched it (queued: the context travels in the step job, so a step
 *   run by another process on pg-boss or BullMQ joins the same trace);
 * - metrics `cairn.runs.started`, `cairn.runs.finished` (by `cairn.run.status`), `cairn.step.duration`
 *   (ms, by outcome), `cairn.step.retries`, `cairn.queue.wait` (ms, runs and queued steps),
 *   `cairn.leases.active` (executions holding a lease in this process), and `cairn.runs.paused` /
 *   `cairn.runs.unpaused` (pauses written and lifted here, by `cairn.pause.scope`).
 *
 * Several engines in one process are told apart by worker id. Only `@opentelemetry/api` is used:
 * without an SDK registered (or providers given), everything is a no-op.
 */
export function cairnTelemetry(options: CairnTelemetryOptions = {}): CairnTelemetry {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(NAME);
  const runsStarted = meter.createCounter('cairn.runs.started', { description: 'Runs claimed for the first time' });
  const runsFinished = meter.createCounter('cairn.runs.finished', { description: 'Runs that ended, by status' });
  const stepDuration = meter.createHistogram('cairn.step.duration', { description: 'Duration of step attempts', unit: 'ms' });
  const retries = meter.createCounter('cairn.step.retries', { description: 'Step attempts that failed and were scheduled again' });
  const queueWait = meter.createHistogram('cairn.queue.wait', {
    description: 'From dispatch (creation of a run, scheduling of a queued step) to its start',
    unit: 'ms',
  });
  const runsPaused = meter.createCounter('cairn.runs.paused', { description: 'Pauses written by engines in this process (engine.pause, pauseWorkflow)' });
  const runsUnpaused = meter.createCounter('cairn.runs.unpaused', { description: 'Pauses lifted by engines in this process (engine.resume, resumeWorkflow)' });
  const activeLeases = meter.createUpDownCounter('cairn.leases.active', { description: 'Executions holding a run lease in this process' });

  const executions = new Map<string, Span>();
  const attempts = new Map<string, Span>();
  const runKey = (e: LifecycleBase) => `${e.workerId}\u0000${e.runId}`;
  const stepKey = (e: StepLifecycleEvent) => `${e.workerId}\u0000${e.runId}\u0000${e.stepKey}\u0000${e.attempt}`;
  const base = (e: LifecycleBase): Attributes => ({
    [A.workflow]: e.workflow,
    [A.version]: e.version,
    [A.runId]: e.runId,
    [A.backend]: e.store,
    [A.workerId]: e.workerId,
  });

  const endExecution = (e: LifecycleBase, outcome: string, error?: { name: string; message: string }, extra: Attributes = {}) => {
    const span = executions.get(runKey(e));
    if (span === undefined) return;
    executions.delete(runKey(e));
    activeLeases.add(-1, { [A.workflow]: e.workflow });
    span.setAttributes({ [A.outcome]: outcome, ...extra });
    if (error !== undefined) {
      span.recordException({ name: error.name, message: error.message }, e.at);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end(e.at);
  };

  const onRun = (message: unknown) => {
    const e = message as RunLifecycleEvent;
    switch (e.type) {
      case 'run.started':
      case 'run.resumed': {
        // A previous execution here that never reported its end (a crash of the engine's code path) is closed first.
        endExecution(e, 'abandoned');
        const span = tracer.startSpan(
          `cairn.run ${e.workflow}`,
          { kind: SpanKind.INTERNAL, startTime: e.at, attributes: base(e) },
          fromCarrier(e.traceContext),
        );
        executions.set(runKey(e), span);
        activeLeases.add(1, { [A.workflow]: e.workflow });
        if (e.type === 'run.started') {
          runsStarted.add(1, { [A.workflow]: e.workflow });
          if (e.queueWaitMs !== undefined) queueWait.record(e.queueWaitMs, { [A.workflow]: e.workflow, [A.kind]: 'run' });
        }
        // Read back by the engine: what this execution starts nests under its span.
        const carrier = toCarrier(trace.setSpan(ROOT_CONTEXT, span));
        if (carrier !== undefined) e.executionTraceContext = carrier;
        return;
      }
      case 'run.suspended':
        endExecution(e, 'suspended', undefined, { [A.suspendReasons]: e.reasons.join(',') });
        return;
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled': {
        const status = e.type.slice(4);
        endExecution(e, status, e.type === 'run.failed' ? e.error : undefined);
        runsFinished.add(1, { [A.workflow]: e.workflow, [A.status]: status });
        return;
      }
      case 'run.lease-lost':
        endExecution(e, 'lease-lost', e.error);
        return;
      case 'run.paused':
      case 'run.unpaused':
        (e.type === 'run.paused' ? runsPaused : runsUnpaused).add(1, { [A.workflow]: e.workflow, [A.pauseScope]: e.scope });
        return;
      default:
        return;
    }
  };

  const onStep = (message: unknown) => {
    const e = message as StepLifecycleEvent;
    if (e.type === 'step.started') {
      // Inline: under this run's execution span. Queued: under the span that dispatched it (its job's context).
      const execution = e.queued ? undefined : executions.get(runKey(e));
      const parent = execution === undefined ? fromCarrier(e.traceContext) : trace.setSpan(ROOT_CONTEXT, execution);
      const attributes = { ...base(e), [A.stepKey]: e.stepKey, [A.attempt]: e.attempt, [A.queued]: e.queued };
      attempts.set(stepKey(e), tracer.startSpan(`cairn.step ${e.stepKey}`, { kind: SpanKind.INTERNAL, startTime: e.at, attributes }, parent));
      if (e.queueWaitMs !== undefined) queueWait.record(e.queueWaitMs, { [A.workflow]: e.workflow, [A.kind]: 'step' });
      return;
    }
    if (e.type === 'step.compensated') {
      executions.get(runKey(e))?.addEvent('cairn.step.compensated', { [A.stepKey]: e.stepKey, [A.outcome]: e.ok ? 'succeeded' : 'failed' }, e.at);
      return;
    }
    const outcome = e.type === 'step.succeeded' ? 'succeeded' : e.type === 'step.failed' ? 'failed' : 'retry';
    stepDuration.record(e.durationMs, { [A.workflow]: e.workflow, [A.outcome]: outcome, [A.queued]: e.queued });
    if (e.type === 'step.retry-scheduled') retries.add(1, { [A.workflow]: e.workflow });
    const span = attempts.get(stepKey(e));
    if (span === undefined) return;
    attempts.delete(stepKey(e));
    span.setAttribute(A.outcome, outcome);
    if (e.type !== 'step.succeeded') {
      span.recordException({ name: e.error.name, message: e.error.message }, e.at);
      span.setStatus({ code: SpanStatusCode.ERROR, message: e.error.message });
    }
    span.end(e.at);
  };

  subscribe(CAIRN_CHANNELS.run, onRun);
  subscribe(CAIRN_CHANNELS.step, onStep);
  return {
    traceContext: () => toCarrier(context.active()),
    close() {
      unsubscribe(CAIRN_CHANNELS.run, onRun);
      unsubscribe(CAIRN_CHANNELS.step, onStep);
      for (const span of [...executions.values(), ...attempts.values()]) span.setAttribute(A.outcome, 'abandoned').end();
      executions.clear();
      attempts.clear();
    },
  };
}
