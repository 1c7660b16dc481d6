import type { RunTags, TagWrite } from '../model/run.js';
import { CairnError } from '../errors/cairn-error.js';

/**
 * What `runs.setTags` does with `write` on a run that has taken `tagWrites` tag writes (absent: 0):
 * `true` to apply it (its place is next), `false` when its place is taken (a replay's call: write
 * nothing). Throws `RUN_CONFLICT` when a write before it is missing. Every backend decides the
 * same way, from the run it read in the same atomic unit as its write.
 */
export function decideTagWrite(runId: string, tagWrites: number | undefined, write: TagWrite): boolean {
  const taken = tagWrites ?? 0;
  if (write.seq < taken) return false;
  if (write.seq > taken) {
    throw new CairnError('RUN_CONFLICT', `Run ${runId}: tag write ${write.seq} comes before write ${taken}`, {
      data: { runId, seq: write.seq, tagWrites: taken },
    });
  }
  return true;
}

/**
 * `current` with each of `tags` set (added, or replacing the value): a new object, `__proto__`
 * kept as an own key (defined, not assigned, which would set the object's prototype).
 */
export function mergeTags(current: RunTags | undefined, tags: RunTags): RunTags {
  const out: RunTags = {};
  for (const source of [current ?? {}, tags]) {
    for (const key of Object.keys(source)) {
      Object.defineProperty(out, key, { value: source[key], enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}
