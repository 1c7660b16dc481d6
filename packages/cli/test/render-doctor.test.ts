// The doctor's terminal report, rendered from report values (no store): wrapping, colour only when
// asked, and store-written text made safe.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { DoctorReport } from '@cairn/core';
import { colors } from '../src/render/colors.js';
import { renderDoctorReport } from '../src/render/doctor-report.js';

const report = (findings: DoctorReport['findings'], extra: Partial<DoctorReport> = {}): DoctorReport => ({
  at: Date.UTC(2026, 11, 3, 12),
  fix: false,
  findings,
  remaining: findings.filter((f) => f.fixed !== true).length,
  truncated: [],
  thresholds: { overdueMs: 1, scheduledStepMs: 1, eventWaitMs: 1, childWakeMs: 1 },
  limits: { runs: 1, stepLoads: 1 },
  ...extra,
});

it('a clean report is one line after the header', () => {
  const text = renderDoctorReport(report([]), { colors: colors(false), width: 80, store: 'memory' });
  assert.equal(text, 'cairn doctor: memory store, checked at 2026-12-03 12:00:00.000Z\nNo problems found.');
});

it('findings are wrapped to the width, escapes in run data are shown, not sent, and colour is off unless enabled', () => {
  const finding = {
    code: 'child-orphaned',
    severity: 'warning' as const,
    runId: 'r\u001b[2J',
    message: `${'word '.repeat(40)}\u001b]0;title\u0007`,
    fixable: false,
  };
  const text = renderDoctorReport(report([finding], { truncated: ['active runs (first 1 read)'] }), { colors: colors(false), width: 40, store: 'x' });
  assert.doesNotMatch(text, /\u001b|\u0007/);
  assert.match(text, /^WARNING child-orphaned {2}run r\\x1b\[2J$/m);
  for (const line of text.split('\n').slice(2, -3)) assert.ok(line.length <= 40, `${JSON.stringify(line)} is wider than 40`);
  assert.match(text, /^1 finding, 1 remains \(0 errors\)\.$/m);
  assert.match(text, /Not everything was read .*active runs \(first 1 read\)/);
  assert.match(renderDoctorReport(report([finding]), { colors: colors(true), width: 80, store: 'x' }), /\u001b\[33m/);
});

it('with --fix each finding says what was done', () => {
  const base = { severity: 'error' as const, message: 'm', fixable: true };
  const text = renderDoctorReport(
    report(
      [
        { ...base, code: 'a', fixed: true, action: 'dispatched the run' },
        { ...base, code: 'b', fixed: false, action: 'not dispatched: no workers' },
      ],
      { fix: true },
    ),
    { colors: colors(false), width: 80, store: 'x' },
  );
  assert.match(text, /^ {2}✔ fixed: dispatched the run$/m);
  assert.match(text, /^ {2}✘ not fixed: not dispatched: no workers$/m);
  assert.match(text, /^2 findings, 1 fixed, 1 remains \(1 error\)\.$/m);
});
