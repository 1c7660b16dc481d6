import type { WipData } from 'pg-boss';

/**
 * Whether a pg-boss worker slot is between batches, from its work-in-progress entry. pg-boss empties
 * a slot's job list only when a batch ends without an error: a batch whose settle failed (the
 * database went away between the handler's end and the job's completion, as in a server restart)
 * leaves its jobs counted, though the slot is idle, sleeping its own poll interval. Such a batch
 * ended in an error recorded at or after the batch started, so it counts as idle. Taking a busy
 * slot for idle costs at most an early fetch (the wake only hastens its next one); taking an idle
 * slot for busy left the queue unfetched until the slot's 300 s backstop poll.
 */
export function slotIdle(wip: Pick<WipData, 'count' | 'lastJobStartedOn' | 'lastErrorOn'>): boolean {
  if (wip.count === 0) return true;
  return wip.lastErrorOn != null && wip.lastJobStartedOn != null && wip.lastErrorOn >= wip.lastJobStartedOn;
}
