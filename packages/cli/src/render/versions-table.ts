import type { VersionsSummary } from '@cairn/core/backend';
import type { Colors } from './colors.js';
import { formatDuration, formatTime } from './format.js';
import { safeText } from './safe-text.js';
import { textTable } from './text-table.js';

/**
 * `cairn versions`: one row per workflow and version — its status, the runs in flight on it, the
 * oldest of them with its age, and when an engine last registered it or its status changed — then
 * a line per workflow with no version at all and per workflow whose read stopped at `--max-runs`.
 */
export function renderVersions(summaries: readonly VersionsSummary[], options: { colors: Colors }): string {
  const rows = summaries.flatMap((s) =>
    s.versions.map((v) => [
      safeText(s.workflow),
      safeText(v.version),
      v.status,
      `${v.inFlight}${s.truncated ? '+' : ''}`,
      v.oldestInFlight === null ? '—' : v.oldestInFlight.runId,
      v.oldestInFlight === null ? '—' : formatDuration(s.readAt - v.oldestInFlight.createdAt),
      v.updatedAt === null ? '—' : formatTime(v.updatedAt),
    ]),
  );
  const lines: string[] = [];
  if (rows.length > 0) lines.push(textTable(['WORKFLOW', 'VERSION', 'STATUS', 'IN FLIGHT', 'OLDEST IN FLIGHT', 'AGE', 'LAST CHANGED'], rows));
  for (const s of summaries) {
    if (s.versions.length === 0) lines.push(`No registered versions of ${safeText(s.workflow)}.`);
    if (s.truncated) {
      lines.push(
        options.colors.dim(
          `${safeText(s.workflow)}: more than ${s.runsRead} runs in flight, only the newest ${s.runsRead} read (--max-runs): counts are lower bounds (+) and older runs may be in flight.`,
        ),
      );
    }
  }
  return lines.join('\n');
}
