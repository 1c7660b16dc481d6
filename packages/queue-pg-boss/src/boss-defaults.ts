import type { ConstructorOptions } from 'pg-boss';

/**
 * pg-boss settings the adapter gives a `PgBoss` it creates, under anything in `bossOptions` (which
 * wins). Each is a timer every process runs on its own, so its statements are paid again by each
 * process added (decision 47):
 *
 * - `schedule: false` — pg-boss's cron (`boss.schedule`) is unused: Cairn's schedules live in its
 *   store. On, every process polls a cron queue (a fetch every 5 s), claims the cron pass every 30 s
 *   and reads the clock skew every 10 minutes.
 * - `flowIntervalSeconds: 3600` — the flow resolver unblocks jobs that wait on a parent job
 *   (pg-boss flows); the adapter sends none. pg-boss has no switch for it short of `supervise:
 *   false`, which would also stop expiring a dead worker's jobs, so it only claims its pass hourly
 *   instead of every 5 s in every process.
 *
 * Guarantee: nothing the adapter relies on changes — supervision (expiry, heartbeat failure,
 * deletion) keeps pg-boss's defaults.
 */
export const BOSS_DEFAULTS: Readonly<Pick<ConstructorOptions, 'schedule' | 'flowIntervalSeconds'>> = Object.freeze({
  schedule: false,
  flowIntervalSeconds: 3600,
});
