import type { DoctorReport } from '@cairn/core';
import type { DoctorFinding } from '@cairn/core/backend';
import type { Colors } from './colors.js';
import { formatTime } from './format.js';
import { safeText } from './safe-text.js';

/** `text` broken into lines of at most `width` characters at spaces, each starting with `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const room = Math.max(20, width - indent.length);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > room) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function findingLines(finding: DoctorFinding, report: DoctorReport, c: Colors, width: number): string[] {
  const severity = finding.severity === 'error' ? c.red(c.bold('ERROR  ')) : c.yellow(c.bold('WARNING'));
  const head = `${severity} ${c.bold(safeText(finding.code))}${finding.runId === undefined ? '' : `  run ${safeText(finding.runId)}`}`;
  const lines = [head, ...wrap(safeText(finding.message), width, '  ')];
  if (finding.fixed === true) lines.push(...wrap(`✔ fixed: ${safeText(finding.action ?? '')}`, width, '  ').map((line) => c.green(line)));
  else if (finding.fixed === false) lines.push(...wrap(`✘ not fixed: ${safeText(finding.action ?? '')}`, width, '  ').map((line) => c.red(line)));
  else if (finding.fixable && !report.fix) lines.push(c.dim('  fixable: cairn doctor --fix'));
  else if (!finding.fixable) lines.push(...wrap('not fixable by the doctor: see the message', width, '  ').map((line) => c.dim(line)));
  return lines;
}

/**
 * `cairn doctor`'s report for a terminal: a summary line, each finding (severity, code, run, what
 * it means wrapped to `width`, and what `--fix` did or would do), then what remains and which reads
 * were truncated. Store-written text (run ids, messages quoting names) is made safe.
 */
export function renderDoctorReport(report: DoctorReport, options: { colors: Colors; width: number; store: string }): string {
  const c = options.colors;
  const out: string[] = [];
  const fixed = report.findings.filter((f) => f.fixed === true).length;
  out.push(c.dim(`cairn doctor: ${safeText(options.store)} store, checked at ${formatTime(report.at)}${report.fix ? ', with --fix' : ''}`));
  if (report.findings.length === 0) {
    out.push(c.green('No problems found.'));
  } else {
    for (const finding of report.findings) out.push('', ...findingLines(finding, report, c, options.width));
    out.push('');
    const errors = report.findings.filter((f) => f.fixed !== true && f.severity === 'error').length;
    const fixable = report.findings.filter((f) => f.fixed === undefined && f.fixable).length;
    const summary = [`${plural(report.findings.length, 'finding')}`];
    if (report.fix) summary.push(`${fixed} fixed`);
    summary.push(report.remaining === 0 ? 'none remains' : `${report.remaining} remain${report.remaining === 1 ? 's' : ''} (${plural(errors, 'error')})`);
    out.push(c.bold(`${summary.join(', ')}.`));
    if (fixable > 0) out.push(`Run ${c.bold('cairn doctor --fix')} to repair ${fixable === 1 ? 'the fixable one' : `the ${fixable} fixable ones`}.`);
  }
  if (report.truncated.length > 0) {
    out.push(c.yellow(`Not everything was read (raise --limit to read more): ${report.truncated.map(safeText).join('; ')}.`));
  }
  return out.join('\n');
}
