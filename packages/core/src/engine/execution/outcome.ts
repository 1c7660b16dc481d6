/** The shapes an execution shares with its callers: outcomes, call sites, step failures and the crash policy. */
import { CairnError } from '../../errors/cairn-error.js';
import type { ErrorRecord } from '../../model/error-record.js';
import type { Json } from '../../model/json.js';
import type { RetryPolicy } from '../define/retry-policy.js';
import type { StepRate } from '../flow/step-rate-gate.js';
import type { StepKind, StepRecord } from '../../model/step.js';
import type { StepContext } from '../define/workflow-context.js';
import type { SuspendReason } from '../../observe/lifecycle-events.js';
import type { Divergence } from './divergence.js';

/** How one execution of a run ended. */
export type Outcome =
  | { kind: 'completed'; output: Json | undefined }
  | { kind: 'failed'; error: ErrorRecord }
  | { kind: 'cancelled'; error: ErrorRecord }
  | { kind: 'suspended'; wakeAt: number | undefined; reasons: SuspendReason[] }
  | { kind: 'crashed'; error: unknown }
  | { kind: 'probe-hit'; fn: (s: StepContext) => unknown; policy: RetryPolicy; timeoutMs: number | undefined; rate?: StepRate }
  | { kind: 'probe-miss' }
  /** A check's replay (no write, no body) ended: compatible, or where it left the history. */
  | { kind: 'checked'; divergence?: Divergence };

/** A step's last attempt failed (already recorded); carries the error record. */
export class StepFailure extends Error {
  constructor(readonly record: ErrorRecord) {
    super(record.message);
  }
}

/**
 * The error every primitive throws, and every running body's `signal.reason` is, once cancellation
 * of the run is observed; it carries the cancel's reason (message and `data.reason`) when one was given.
 */
export function cancelledError(runId: string, reason?: string): CairnError {
  if (reason === undefined) return new CairnError('CANCELLED', `Run ${runId} was cancelled`, { data: { runId } });
  return new CairnError('CANCELLED', `Run ${runId} was cancelled: ${reason}`, { data: { runId, reason } });
}

/**
 * The error a run fails with when its deadline passes: thrown by every primitive, and the
 * `signal.reason` of every running body, from then on; recorded as the run's error.
 */
export function deadlineExceededError(runId: string, deadline: number): CairnError {
  return new CairnError('DEADLINE_EXCEEDED', `Run ${runId} passed its deadline (${new Date(deadline).toISOString()})`, { data: { runId, deadline } });
}

/** A primitive call's identity: its key, its position, and what was recorded there. */
export interface Site {
  kind: StepKind;
  name: string;
  key: string;
  seq: number;
  recorded: StepRecord | undefined;
}

// A crashed attempt costs one of the step's attempts; past this many extra ones it fails for good.
export const ABANDON_GRACE = 3;
// Store and queue failures abandon the execution (the lease expires and recovery resumes the run)
// instead of failing the run: an outage must never turn into a failed workflow.
// A payload the codec cannot decode (a key this process lacks) is one too: an engine given the key
// finishes the run.
export const INFRA_CODES = new Set(['STORE_ERROR', 'QUEUE_ERROR', 'LEASE_LOST', 'RUN_CONFLICT', 'RUN_NOT_FOUND', 'STEP_CONFLICT', 'CODEC_ERROR']);
