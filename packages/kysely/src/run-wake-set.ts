import { sql, type RawBuilder } from 'kysely';

// `wake_at` lowered to `now` (never raised). MySQL evaluates SET assignments left to right, so every
// statement assigns `due_at` first, while the columns it reads still hold their old values.
const lowered = (now: number) => sql`case when wake_at is null or wake_at > ${now} then ${now} else wake_at end`;

/** The SET list of a wake-up: `wake_at = min(wake_at, now)`; pending/waiting runs become due. */
export function wakeSet(now: number): RawBuilder<unknown> {
  return sql`due_at = case when status in ('pending', 'waiting') then ${lowered(now)} else due_at end,
    wake_at = ${lowered(now)}, updated_at = ${now}`;
}
