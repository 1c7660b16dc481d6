/** A worker engine that listens for wake-ups on the same store (a process, usually). */
interface Member {
  /** The workflows it runs; undefined when it did not say (it is then assumed to run any). */
  workflows: ReadonlySet<string> | undefined;
}

/** A wake-up for a run another member owns, kept until a recovery pass shows whether it claimed it. */
interface Handed {
  owner: string;
  at: number;
}

// Bounds the wake-ups remembered for other members (see handedTo): older ones are forgotten first.
const MAX_HANDED = 10_000;

/**
 * Which listening worker claims a run signalled through the store, so that one process claims it
 * instead of all of them (decision 40). Every worker keeps the same roster — the listening workers
 * of the store, learnt from their `join`, `here` and `leave` announcements — and picks the owner of
 * a run by rendezvous hashing (highest hash of run id and member id among the members that run its
 * workflow): every worker with the same roster picks the same owner, and a member leaving or
 * joining moves only its own share.
 *
 * Guarantees: a worker always counts itself in. A roster that differs between workers (a
 * announcement not yet received) costs duplicate claims (fenced: one wins) or a run left to the
 * next recovery pass, never a lost run: the run is due in the store either way (decision 34). A
 * member that stopped without leaving (killed) is dropped once a recovery pass finds a run
 * signalled to it still due a recovery interval later (`overdue`).
 */
export class WorkerRoster {
  readonly #self: string;
  readonly #members = new Map<string, Member>();
  readonly #handed = new Map<string, Handed>();
  // Runs this worker claimed from signals since it last announced itself, and when that was.
  #claimedSinceAnnounce = 0;
  #announcedAt: number;

  /** `now`: when this worker announces its join (the clock of `claims` and `overdue`). */
  constructor(self: string, workflows: readonly string[], now: number) {
    this.#self = self;
    this.#members.set(self, { workflows: new Set(workflows) });
    this.#announcedAt = now;
  }

  /** How many workers the roster counts, this one included. */
  get size(): number {
    return this.#members.size;
  }

  /** Adds or updates a member; true when it was not known. */
  add(id: string, workflows: readonly string[] | undefined): boolean {
    const known = this.#members.has(id);
    this.#members.set(id, { workflows: workflows === undefined ? undefined : new Set(workflows) });
    return !known;
  }

  /** Removes a member (it left, or is presumed dead); never this worker. */
  remove(id: string): void {
    if (id !== this.#self) this.#members.delete(id);
  }

  /**
   * True when this worker should claim the signalled run: it is the run's owner among the members
   * that run `workflow`. Otherwise the wake-up is remembered for `overdue`.
   */
  claims(runId: string, workflow: string, now: number): boolean {
    let owner = this.#self;
    let best = -1;
    for (const [id, member] of this.#members) {
      if (member.workflows !== undefined && !member.workflows.has(workflow)) continue;
      const score = rendezvous(runId, id);
      if (score > best || (score === best && id < owner)) {
        best = score;
        owner = id;
      }
    }
    if (owner === this.#self) {
      this.#claimedSinceAnnounce += 1;
      return true;
    }
    this.#handed.delete(runId);
    this.#handed.set(runId, { owner, at: now });
    if (this.#handed.size > MAX_HANDED) this.#handed.delete(this.#handed.keys().next().value!);
    return false;
  }

  /**
   * True (once) when this worker should say `here` again: it claimed signalled runs since it last
   * announced itself, `everyMs` or more ago. Another worker may have dropped it as far behind
   * (`overdue`) while it was only busy; it would then claim this worker's share too (duplicates,
   * fenced). An idle worker claims nothing, so it never announces (no idle cost); one still dropped
   * keeps claiming its own share, which makes it announce within `everyMs`.
   */
  announceDue(now: number, everyMs: number): boolean {
    if (this.#claimedSinceAnnounce === 0 || now - this.#announcedAt < everyMs) return false;
    this.#claimedSinceAnnounce = 0;
    this.#announcedAt = now;
    return true;
  }

  /**
   * A recovery pass found `runId` due at `now`: if it was signalled to another member at least
   * `graceMs` ago, that member did not claim it (dead, or far behind), and is dropped — its share
   * goes to the others. Wake-ups older than three graces are forgotten.
   */
  overdue(runId: string, now: number, graceMs: number): void {
    const handed = this.#handed.get(runId);
    if (handed !== undefined && now - handed.at >= graceMs) {
      this.#handed.delete(runId);
      this.remove(handed.owner);
    }
    for (const [id, entry] of this.#handed) {
      if (now - entry.at < 3 * graceMs) break;
      this.#handed.delete(id);
    }
  }
}

// FNV-1a over "runId\0memberId" (32 bits): cheap, and spread well enough to share runs evenly.
function rendezvous(runId: string, member: string): number {
  let hash = 0x811c9dc5;
  const text = `${runId}\u0000${member}`;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // A final avalanche, so that ids differing only in their last characters still spread.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  return hash >>> 0;
}
