import { copyRecord } from './copy-record.js';
import type { NewStep, StepRecord } from '../model/step.js';

/**
 * The record that `steps.insert(runId, fence, step, now)` creates when the key is not recorded
 * yet: `attempt` 1, `queued` false unless `step` sets it, `createdAt = updatedAt = now`.
 *
 * Guarantees: `output` and `error` are deep copies, so later changes to `step` never reach the
 * record; an optional field `step` leaves out (`output`, `error`, `wakeAt`, `childRunId`, `turn`) is absent
 * from the record, not present as `undefined`; `worker` is not copied (it belongs to attempt 1,
 * which a `running` step opens in the same write). `fence`, when a number, is stamped as
 * `StepRecord.fence` (stores with `insertFinished`; others leave it out). Backends that store steps in another shape can
 * build this record and encode it, so the defaults stay the reference store's.
 */
export function newStepRecord(runId: string, step: NewStep, now: number, fence?: number | null): StepRecord {
  const record: StepRecord = {
    runId,
    key: step.key,
    name: step.name,
    kind: step.kind,
    seq: step.seq,
    status: step.status,
    attempt: 1,
    maxAttempts: step.maxAttempts,
    queued: step.queued ?? false,
    createdAt: now,
    updatedAt: now,
  };
  if (step.output !== undefined) record.output = copyRecord(step.output);
  if (step.error !== undefined) record.error = copyRecord(step.error);
  if (step.wakeAt !== undefined) record.wakeAt = step.wakeAt;
  if (step.childRunId !== undefined) record.childRunId = step.childRunId;
  if (step.turn !== undefined) record.turn = step.turn;
  if (fence !== undefined && fence !== null) record.fence = fence;
  return record;
}
