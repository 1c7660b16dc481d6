// Their own file: the store's reads and writes name these columns (to read them, or to tell a
// database that lacks one to migrate), and importing a migration for them would load the
// dialects, which load those reads and writes, in a circle.

/** The column `cairn_0003_step_turn` adds to `steps`: `StepRecord.turn`, NULL when absent. */
export const TURN_COLUMN = 'turn';

/** The column `cairn_0008_step_finished` adds to `steps`: `StepRecord.fence`, NULL when absent. */
export const FENCE_COLUMN = 'fence';

/** The column `cairn_0011_slots` adds to `runs`: `RunRecord.priority`, NULL when 0 or absent. */
export const PRIORITY_COLUMN = 'priority';

/** The column `cairn_0015_run_pause` adds to `runs`: `RunRecord.paused` as JSON text, NULL when not paused. */
export const PAUSED_COLUMN = 'paused_json';

/** The columns `cairn_0017_run_tags` adds to `runs`: `RunRecord.tags` as JSON text and `RunRecord.tagWrites`, NULL when none. */
export const TAGS_COLUMN = 'tags_json';
export const TAG_WRITES_COLUMN = 'tag_writes';

/**
 * The columns `cairn_0018_run_wake_promise` adds to `runs`: the time of the earliest outstanding
 * promise (`runs.promiseWake`) and how many are outstanding, NULL when none.
 */
export const PROMISED_COLUMN = 'promised_at';
export const PROMISES_COLUMN = 'promises';
