// `ctx.setTags`: writes to the run's tags (docs/operating.md, Finding runs; decision 68). Not
// recorded as steps: a tag write is positional (the k-th `setTags` of the run is tag write k, as the
// k-th emit of a stream is chunk k), so a replay that makes the call again finds its place taken
// and writes nothing — it can neither rewrite a tag a later write changed nor reorder the writes.
// Like a state write, each call takes the turn after it, so what the code does next happens at the
// same point on every execution.
import type { RunTags } from '../../model/run.js';
import { checkTags, mergedTagCount, TAG_LIMITS, tagLimit, tagsUnsupported } from '../check-tags.js';
import { mergeTags } from '../../store/tag-write.js';
import type { Call, Delivery } from './call.js';
import type { Replay } from './replay.js';

/** The tag writes of one execution: the position of the next, and the run's tags as they stand after this execution's writes. */
export class TagWrites {
  /** The position (`TagWrite.seq`) of this execution's next `setTags` call. */
  private next = 0;
  /** Writes the run had taken when this execution was claimed: calls below it are replays. */
  private readonly taken: number;
  /**
   * The last write this execution started: the store takes tag writes only in order, and calls made
   * at once (`Promise.all`) would reach a pooled store in any order, so each waits for the one before.
   */
  private tail: Promise<unknown> | undefined;

  constructor(private readonly r: Replay) {
    this.taken = r.run.tagWrites ?? 0;
  }

  /** `ctx.setTags`: checks, takes the next place among the run's tag writes and writes there. */
  async setTags(call: Call, rawTags: unknown): Promise<Delivery> {
    const tags = checkTags('ctx.setTags tags', rawTags);
    const setTags = this.r.rt.store.runs.setTags;
    if (setTags === undefined) throw tagsUnsupported('ctx.setTags', this.r.rt.store.name);
    const seq = this.next;
    // A replayed call's write is in the run's tags already (they were read with the claim): it was
    // checked when it was first made, and its place is taken.
    if (seq >= this.taken) {
      const count = mergedTagCount(this.r.tags, tags);
      if (count > TAG_LIMITS.maxTags) throw tagLimit('ctx.setTags tags', `would leave the run with ${count} tags (at most ${TAG_LIMITS.maxTags})`);
    }
    this.next = seq + 1;
    const turn = this.r.claimNext(call);
    if (seq >= this.taken && this.r.probeKey === undefined) {
      this.r.tags = mergeTags(this.r.tags, tags);
      const write = () => this.write(setTags.bind(this.r.rt.store.runs), seq, tags);
      const written = this.tail === undefined ? write() : this.tail.then(write);
      const tail = written.catch(() => {});
      this.tail = tail;
      try {
        await written;
      } finally {
        if (this.tail === tail) this.tail = undefined;
      }
    }
    return { turn, ok: true, value: undefined };
  }

  private async write(setTags: NonNullable<Replay['rt']['store']['runs']['setTags']>, seq: number, tags: RunTags): Promise<void> {
    // Crash points around the write (`tags#<seq>`).
    const site = `tags#${seq}`;
    this.r.fault('before-checkpoint', site);
    await this.r.write((fence, now) => setTags(this.r.run.id, fence, { seq, tags }, now));
    this.r.fault('after-checkpoint', site);
  }
}
