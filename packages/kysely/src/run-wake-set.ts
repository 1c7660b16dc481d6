import { sql, type RawBuilder } from 'kysely';

// `wake_at` lowered to `now` (never raised). MySQL evaluates SET assignments left to right, so every
// statement assigns `due_at` first, while the columns it reads still hold their old values.
const lowered = (now: number) => sql`case when wake_at is null or wake_at > ${now} then ${now} else wake_at end`;

/** The SET list of a wake-up: `wake_at = min(wake_at, now)`; pending/waiting runs become due. */
export function wakeSet(now: number, updatedAt = now): RawBuilder<unknown> {
  return sql`due_at = case when status in ('pending', 'waiting') then ${lowered(now)} else due_at end,
    wake_at = ${lowered(now)}, updated_at = ${updatedAt}`;
}

/** The SET list of a promise (`runs.promiseWake`): a wake-up at `at`, `promised_at = min(promised_at, at)`, one more outstanding. */
export function promiseSet(at: number, now: number): RawBuilder<unknown> {
  return sql`${wakeSet(at, now)}, promised_at = case when promised_at is null or promised_at > ${at} then ${at} else promised_at end,
    promises = coalesce(promises, 0) + 1`;
}

/**
 * The SET list of a kept promise (`runs.keepPromise`): a wake-up now, one promise fewer, and at
 * none the promise forgotten. MySQL assigns left to right: promised_at reads promises before it
 * changes.
 */
export function keepSet(now: number): RawBuilder<unknown> {
  return sql`${wakeSet(now)}, promised_at = case when promises > 1 then promised_at else null end,
    promises = case when promises > 1 then promises - 1 else null end`;
}
