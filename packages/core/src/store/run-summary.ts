import type { ErrorRecord } from '../model/error-record.js';
import type { ErrorSummary, RunRecord, RunSummary } from '../model/run.js';

/** The name, code and message of an error: what a `RunSummary` keeps of it. */
function toErrorSummary(error: ErrorRecord): ErrorSummary {
  const summary: ErrorSummary = { name: error.name, message: error.message };
  if (error.code !== undefined) summary.code = error.code;
  return summary;
}

/**
 * The summary of a whole run record (no `input`, `output`, `retries`; the error reduced), for
 * stores that read the whole record anyway (memory, Redis). SQL and MongoDB leave the payloads unread.
 */
export function toRunSummary(run: RunRecord): RunSummary {
  const { input: _input, output: _output, error, retries: _retries, ...rest } = run;
  return error === undefined ? rest : { ...rest, error: toErrorSummary(error) };
}
