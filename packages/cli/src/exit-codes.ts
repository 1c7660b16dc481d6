/**
 * The exit codes of `cairn`, one meaning each, so a script can tell what happened. Every command
 * that fails before it changed anything says so on stderr; documented in docs/operating.md.
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** Something failed that is not the caller's doing: the store is unreachable, an unexpected error. */
  failure: 1,
  /** Bad usage: an unknown command or option, a malformed value, no store configured, a backend package missing. Nothing was changed. */
  usage: 2,
  /** The run named does not exist (or, for `fork`, the step; for `schedules` and `versions`, the schedule or version). */
  notFound: 3,
  /** The run exists but is in a status that refuses the operation (delete an active run without `--force`, retry a completed run, fork a run whose every version is retired). Nothing was changed. */
  refused: 4,
  /** `cairn doctor`: problems remain (reserved for the doctor command). */
  problems: 5,
} as const;

/** One of the documented exit codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
