// The payload of a queued step's job, apart from the code that runs it: the runtime, the dispatch
// and the execution that sends it need the shape, not the worker (no import cycle through it).

/** The payload of a step job. */
export interface StepJob {
  runId: string;
  workflow: string;
  key: string;
  attempt: number;
  /** The trace context of the execution that dispatched the attempt (see `RunStartedEvent.executionTraceContext`). */
  traceContext?: Record<string, string>;
  /** The run's priority (absent: 0): the step job's, and the run's when the step wakes it. */
  priority?: number;
}
