import type { RunVerdict, Verdict } from '@cairn/core/backend';
import type { Colors } from './colors.js';
import { divergenceParts } from './divergence.js';
import { safeText } from './safe-text.js';
import { textTable } from './text-table.js';

/** Diverging (or unchecked) runs the text report lists; `--json` has every one. */
export const LISTED_RUNS = 20;

/** The verdicts, in the order the report counts them. */
export const VERDICTS: readonly Verdict[] = ['compatible', 'diverges', 'missing-version', 'unreadable'];

/** What `cairn check` prints from, gathered as the verdicts stream in: counts per workflow and version, and the first runs that do not fit. */
export class CheckTally {
  checked = 0;
  readonly counts: Record<Verdict, number> = { compatible: 0, diverges: 0, 'missing-version': 0, unreadable: 0 };
  /** Per workflow and version, in the order first seen. */
  readonly groups = new Map<string, { workflow: string; version: string; counts: Record<Verdict, number> }>();
  /** Diverging runs whose history holds a patch marker where the build calls something else (a rollback past a patch). */
  patchMarkers = 0;
  /** The first `LISTED_RUNS` runs whose verdict is not `compatible`. */
  readonly listed: RunVerdict[] = [];

  add(verdict: RunVerdict): void {
    this.checked += 1;
    this.counts[verdict.verdict] += 1;
    const id = JSON.stringify([verdict.workflow, verdict.version]);
    let group = this.groups.get(id);
    if (group === undefined) {
      group = { workflow: verdict.workflow, version: verdict.version, counts: { compatible: 0, diverges: 0, 'missing-version': 0, unreadable: 0 } };
      this.groups.set(id, group);
    }
    group.counts[verdict.verdict] += 1;
    if (verdict.divergence?.recorded?.kind === 'patch') this.patchMarkers += 1;
    if (verdict.verdict !== 'compatible' && this.listed.length < LISTED_RUNS) this.listed.push(verdict);
  }

  /** Runs that would not resume on the candidate build (or could not be checked): the exit code is 1 when any. */
  get unfit(): number {
    return this.checked - this.counts.compatible;
  }
}

/** A table's lines with its head dimmed. */
const dimHead = (table: string, c: Colors) => table.split('\n').map((line, i) => (i === 0 ? c.dim(line) : line));

/** How the summary names the runs of each verdict. */
export const VERDICT_LABEL: Record<Verdict, string> = {
  compatible: 'compatible',
  diverges: 'diverging',
  'missing-version': 'on a version the build lacks',
  unreadable: 'unreadable',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * `cairn check` as text: a table per workflow and version with the runs per verdict, then the
 * first `LISTED_RUNS` runs that do not fit with their divergence (position, what the history has,
 * what the code called, the line) or the reason they were not replayed, then one line of summary
 * and advice. Locations under `cwd` are shown relative to it.
 */
export function renderCheckReport(tally: CheckTally, options: { colors: Colors; workflows: readonly string[]; cwd: string }): string {
  const c = options.colors;
  const lines: string[] = [];
  if (tally.checked === 0) {
    return `No runs in flight of ${options.workflows.map((w) => safeText(w)).join(', ')}: nothing to check.`;
  }
  const groups = [...tally.groups.values()];
  const table = textTable(
    ['WORKFLOW', 'VERSION', 'RUNS', ...VERDICTS.map((v) => v.toUpperCase())],
    groups.map((g) => [
      safeText(g.workflow),
      safeText(g.version),
      String(VERDICTS.reduce((sum, v) => sum + g.counts[v], 0)),
      ...VERDICTS.map((v) => String(g.counts[v])),
    ]),
  );
  lines.push(...dimHead(table, c));

  const diverging = tally.listed.filter((v) => v.divergence !== undefined);
  if (diverging.length > 0) {
    lines.push('', c.bold('Diverging runs'));
    const rows = diverging.map((v) => {
      const p = divergenceParts(v.divergence as NonNullable<RunVerdict['divergence']>, options.cwd);
      return [v.runId, p.at, p.history, p.code, [p.location ?? '', p.note ?? ''].filter(Boolean).join(' ')];
    });
    lines.push(...dimHead(textTable(['RUN', 'AT', 'THE HISTORY HAS', 'THE CODE CALLED', 'LOCATION'], rows), c));
  }
  const unchecked = tally.listed.filter((v) => v.divergence === undefined);
  if (unchecked.length > 0) {
    lines.push('', c.bold('Runs not replayed'));
    for (const v of unchecked) lines.push(`${v.runId}  ${c.yellow(v.verdict)}: ${safeText(v.reason ?? '')}`);
  }
  if (tally.unfit > tally.listed.length) lines.push(c.dim(`… and ${tally.unfit - tally.listed.length} more (--json lists every run)`));

  lines.push('');
  const summary = `${plural(tally.checked, 'run')} checked: ${VERDICTS.filter((v) => tally.counts[v] > 0)
    .map((v) => `${tally.counts[v]} ${VERDICT_LABEL[v]}`)
    .join(', ')}.`;
  lines.push(tally.unfit === 0 ? c.green(summary) : c.red(summary));
  if (tally.counts.diverges > 0) {
    lines.push(
      'Resumed by this build, the diverging runs would fail with NON_DETERMINISM.',
      'Guard each change with ctx.patched(id), or register the new code as a new version (docs/versioning.md).',
    );
  }
  if (tally.patchMarkers > 0) {
    lines.push(
      `${plural(tally.patchMarkers, 'history holds', 'histories hold')} a patch marker this build does not reach: keep its ctx.patched(id) (or ctx.deprecatePatch(id)) in place until every run that recorded it has ended.`,
    );
  }
  if (tally.counts['missing-version'] > 0) lines.push('Keep every version that has runs in flight in the build until they end (cairn versions).');
  return lines.join('\n');
}
