import { describe, it } from 'node:test';
import { traceOneRun } from './helpers/trace-one-run.js';

describe('@cairn/otel in one process (memory store, local queue)', () => {
  it('a run with a retried step, a sleep, a child and a queued step is one trace under the caller, nested by parent ids; metrics count it', () =>
    traceOneRun());
});
