import { CairnError } from '@cairn/core';
import { encodeText, keyHash } from './codec/text.js';

/** The stored forms of a step's identity. */
export interface StepIdentity {
  runId: string;
  key: string;
  keyHash: string;
}

/** Encodes the identity of step `key` of `runId`. */
export function stepIdentity(runId: string, key: string): StepIdentity {
  const storedKey = encodeText(key);
  return { runId: encodeText(runId), key: storedKey, keyHash: keyHash(storedKey) };
}

/** `STEP_CONFLICT`: the step is missing or does not match the expected status/attempt. */
export function stepConflict(runId: string, key: string, current: { status: string; attempt: number } | undefined): CairnError {
  return new CairnError('STEP_CONFLICT', `Step ${key} of run ${runId} does not match the expected status/attempt`, {
    data: { runId, key, status: current?.status ?? null, attempt: current?.attempt ?? null },
  });
}
