import { Cron } from 'croner';
import { invalidInput } from '../errors/invalid-input.js';

/**
 * A cron expression read in a time zone, by croner. Its ticks are instants (epoch ms); wall times a
 * daylight-saving change skips or repeats yield exactly one tick each (see docs/schedules.md):
 * a skipped time ticks at the instant the clocks jump (02:30 on a night that goes 02:00 → 03:00
 * ticks at 03:00 new time), a repeated fixed time ticks at its first occurrence only.
 */
export interface CronTicks {
  /** The first tick strictly after `after`; `undefined` when the expression has no more. */
  next(after: number): number | undefined;
}

/**
 * Parses `cron` in `timezone`, throwing `INVALID_INPUT` (naming `what`) for an expression croner
 * refuses, an unknown time zone, or an expression that never ticks. Reads nothing else.
 */
export function cronTicks(what: string, cron: unknown, timezone: unknown): CronTicks {
  if (typeof cron !== 'string' || cron.trim() === '') throw invalidInput(`${what} cron`, 'must be a cron expression', cron);
  if (typeof timezone !== 'string' || timezone === '') throw invalidInput(`${what} timezone`, 'must be an IANA time zone name', timezone);
  // Intl knows every zone croner can convert to; checking here gives a message naming the zone.
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalidInput(`${what} timezone`, 'is not a time zone this runtime knows', timezone);
  }
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, paused: true });
  } catch (error) {
    throw invalidInput(`${what} cron`, `is not a cron expression croner accepts (${(error as Error).message})`, cron);
  }
  const next = (after: number): number | undefined => job.nextRun(new Date(after))?.getTime();
  if (next(Date.UTC(2000, 0, 1)) === undefined) throw invalidInput(`${what} cron`, 'never ticks', cron);
  return { next };
}
