import { encodeText, keyHash } from '../codec/text.js';

/** One key and holder as the statements and routines match them: stored forms and their hashes. */
export interface SlotTarget {
  /** SHA-256 of the key's stored form: the key column of both slot tables. */
  keyHash: string;
  /** The holder's stored form (`encodeText`). */
  holder: string;
  /** SHA-256 of `holder`: the waiters' key column. */
  holderHash: string;
}

/** The `SlotTarget` of a key and a holder. */
export function slotTarget(key: string, holder: string): SlotTarget {
  const stored = encodeText(holder);
  return { keyHash: keyHash(encodeText(key)), holder: stored, holderHash: keyHash(stored) };
}
