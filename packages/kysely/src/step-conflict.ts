import { CairnError } from '@cairn/core';

/** `STEP_CONFLICT`: the step is missing or does not match the expected status/attempt. */
export function stepConflict(runId: string, key: string, current: { status: string; attempt: number } | undefined): CairnError {
  return new CairnError('STEP_CONFLICT', `Step ${key} of run ${runId} does not match the expected status/attempt`, {
    data: { runId, key, status: current?.status ?? null, attempt: current?.attempt ?? null },
  });
}
