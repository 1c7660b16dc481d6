// Its own file: the store's write paths name these migrations in their errors, and importing
// migrations.ts for that would load the dialects, which load those write paths, in a circle.
/** The migration names this package ships, oldest first. */
export const CAIRN_MIGRATION_NAMES = [
  'cairn_0001_initial',
  'cairn_0002_step_routines',
  'cairn_0003_step_turn',
  'cairn_0004_run_deadline',
  'cairn_0005_event_messages',
  'cairn_0006_operations',
  'cairn_0007_run_trace_context',
  'cairn_0008_step_finished',
  'cairn_0010_schedules',
  'cairn_0011_slots',
  'cairn_0012_step_insert_v2',
  'cairn_0013_streams',
  'cairn_0014_runs_workflow_status',
  'cairn_0015_run_pause',
  'cairn_0016_bulk_operations',
  'cairn_0017_run_tags',
  'cairn_0018_run_wake_promise',
] as const;
