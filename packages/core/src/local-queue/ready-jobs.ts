import type { Job } from '../queue/queue.js';

/** A job waiting in the local queue, with what dispatch needs to order it. */
export interface QueuedJob {
  /** What the handler receives. */
  readonly job: Job;
  readonly priority: number;
  readonly dedupeKey: string | undefined;
}

// `undefined` stands for "no group": ungrouped jobs share one round-robin slot and have no cap.
type GroupKey = string | undefined;

/** First-in first-out list with O(1) shift (Array#shift is O(n)). */
class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#items[this.#head];
  }

  shift(): T | undefined {
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head++;
    // Compact once the consumed prefix dominates, keeping memory proportional to what is queued.
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

/**
 * The ready jobs of one queue name: strict priority between levels, round robin between groups
 * within a level, first-in first-out within a group.
 *
 * Within a level the groups sit in a Map whose insertion order is the rotation: a served group moves
 * to the back, so every group with ready jobs is offered a slot before any group is offered a
 * second one, however many jobs each has.
 */
export class ReadyJobs {
  #levels = new Map<number, Map<GroupKey, Fifo<QueuedJob>>>();
  // Distinct priorities with ready jobs, highest first.
  #priorities: number[] = [];
  #size = 0;

  /** How many jobs are ready. */
  get size(): number {
    return this.#size;
  }

  /** Adds a job behind every ready job of its group and priority. */
  push(entry: QueuedJob): void {
    let level = this.#levels.get(entry.priority);
    if (level === undefined) {
      level = new Map();
      this.#levels.set(entry.priority, level);
      this.#insertPriority(entry.priority);
    }
    const key = entry.job.group?.id;
    let fifo = level.get(key);
    if (fifo === undefined) {
      fifo = new Fifo();
      level.set(key, fifo);
    }
    fifo.push(entry);
    this.#size++;
  }

  /**
   * Removes and returns the next job `canStart` accepts: from the highest priority level that has
   * one, the first group in rotation whose oldest job is accepted. A group whose oldest job is
   * refused (its group is at its cap) is passed over without blocking the groups behind it, and
   * keeps its place in the rotation.
   */
  take(canStart: (entry: QueuedJob) => boolean): QueuedJob | undefined {
    for (let p = 0; p < this.#priorities.length; p++) {
      const priority = this.#priorities[p]!;
      const level = this.#levels.get(priority)!;
      for (const [key, fifo] of level) {
        const head = fifo.peek()!;
        if (!canStart(head)) continue;
        fifo.shift();
        this.#size--;
        level.delete(key);
        if (fifo.size > 0) {
          level.set(key, fifo);
        } else if (level.size === 0) {
          this.#levels.delete(priority);
          this.#priorities.splice(p, 1);
        }
        return head;
      }
    }
    return undefined;
  }

  /** Drops every ready job. */
  clear(): void {
    this.#levels.clear();
    this.#priorities = [];
    this.#size = 0;
  }

  #insertPriority(priority: number): void {
    // Binary search for the first smaller priority; there are few distinct levels in practice.
    let lo = 0;
    let hi = this.#priorities.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#priorities[mid]! > priority) lo = mid + 1;
      else hi = mid;
    }
    this.#priorities.splice(lo, 0, priority);
  }
}
