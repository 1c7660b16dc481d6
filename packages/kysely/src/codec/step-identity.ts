import { encodeText, keyHash } from './text.js';

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
