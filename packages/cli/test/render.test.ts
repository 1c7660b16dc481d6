// The renderers and the output rules, without a store: escaping, colour choice, 80 columns.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Json, RunTimeline } from '@cairn/core';
import type { Divergence } from '@cairn/core/backend';
import { colorEnabled, colors, renderRunsTable, renderTimeline, safeJson, safeText } from '@cairn/cli';
import { CheckTally, renderCheckReport } from '../src/render/check-report.js';

const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('safe output', () => {
  it('safeText shows every control and reordering character as an escape', () => {
    assert.equal(safeText('a\u001b[31mb\u0007c\nd\u009be\u202ef'), 'a\\x1b[31mb\\x07c\\nd\\x9be\\u202ef');
    assert.equal(safeText('plain — ünïcödé 🎉'), 'plain — ünïcödé 🎉');
  });
  it('safeJson is valid JSON of the same value with no raw control character', () => {
    const value = { name: 'x\u001b]0;t\u0007', c1: '\u009b2J', bidi: '\u202e', nested: [{ k: '\u0085' }] };
    const text = safeJson(value);
    assert.doesNotMatch(text, RAW);
    assert.deepEqual(JSON.parse(text), value);
  });
  it('colour: only on a TTY unless FORCE_COLOR; NO_COLOR and --no-color turn it off', () => {
    assert.equal(colorEnabled({}, false), false);
    assert.equal(colorEnabled({}, true), true);
    assert.equal(colorEnabled({ TERM: 'dumb' }, true), false);
    assert.equal(colorEnabled({ NO_COLOR: '1' }, true), false);
    assert.equal(colorEnabled({ NO_COLOR: '' }, true), true);
    assert.equal(colorEnabled({ FORCE_COLOR: '1' }, false), true);
    assert.equal(colorEnabled({ FORCE_COLOR: '0' }, true), false);
    assert.equal(colorEnabled({ FORCE_COLOR: '1' }, true, false), false);
    assert.equal(colors(false).red('x'), 'x');
  });
});

const t0 = Date.UTC(2026, 11, 3, 12, 0, 0);
const timeline: RunTimeline = {
  run: {
    id: '01a23bf3-a406-7563-b91e-128938a7fda5',
    workflow: 'a-workflow-with-a-very-long-name-indeed',
    version: '1',
    status: 'failed',
    createdAt: t0,
    updatedAt: t0 + 5000,
    endedAt: t0 + 5000,
    durationMs: 5000,
    input: null,
    error: { name: 'CairnError', code: 'STEP_FAILED', message: 'x'.repeat(300) },
    cancelRequested: false,
  },
  steps: [
    {
      key: 'charge',
      name: 'a step name much longer than twenty characters',
      kind: 'task',
      seq: 0,
      status: 'failed',
      queued: true,
      maxAttempts: 2,
      startedAt: t0,
      endedAt: t0 + 4000,
      durationMs: 4000,
      attempts: [
        { attempt: 1, status: 'failed', worker: 'w1', startedAt: t0, endedAt: t0 + 1000, durationMs: 1000, error: { name: 'Error', message: 'y'.repeat(200) } },
        { attempt: 2, status: 'abandoned', worker: 'w2', startedAt: t0 + 2000, endedAt: t0 + 4000, durationMs: 2000 },
      ],
    },
    {
      key: 'event:go',
      name: 'event:go',
      kind: 'event',
      seq: 1,
      status: 'waiting',
      queued: false,
      maxAttempts: 1,
      attempts: [],
      startedAt: t0 + 4000,
      wait: { kind: 'event', event: 'go', timeoutAt: t0 + 9000 },
    },
  ],
  children: [],
  state: { long: 'z'.repeat(500) },
  span: { from: t0, to: t0 + 5000 },
};

describe('renderTimeline', () => {
  it('fits 80 columns (long names, errors and state values are cut), one row per attempt, waits described', () => {
    const text = renderTimeline(timeline);
    for (const line of text.split('\n')) assert.ok([...line].length <= 80, `wider than 80: ${line}`);
    assert.match(text, /^status\s+FAILED after 5.00 s$/m);
    assert.match(text, /^a step name much lo…\s+1 failed\s+1.00 s\s+task\/q\s+█/m);
    assert.match(text, /^\s+2 abandoned\s+—/m);
    assert.match(text, /waits for event "go" until 2026-12-03 12:00:09.000Z/);
    assert.match(text, /^event:go\s+— waiting\s+…\s+event/m);
  });
  it('uses the width it is given, and colours only when asked', () => {
    const wide = renderTimeline(timeline, { width: 120 });
    assert.ok(wide.split('\n').some((line) => [...line].length > 80));
    for (const line of wide.split('\n')) assert.ok([...line].length <= 120);
    assert.doesNotMatch(renderTimeline(timeline), /\u001b/);
    assert.match(renderTimeline(timeline, { colors: colors(true) }), /\u001b\[31m/);
  });
  it('renderRunsTable: 80 columns, escaped', () => {
    const text = renderRunsTable([{ id: timeline.run.id, workflow: 'evil\u001b[2J-name-that-is-long', status: 'failed', createdAt: t0 }]);
    for (const line of text.split('\n')) assert.ok(line.length <= 80);
    assert.doesNotMatch(text, RAW);
    assert.match(text, /evil\\x1b\[2J-na…/);
  });
});

describe('divergence reports', () => {
  const divergence: Divergence = {
    runId: timeline.run.id,
    reason: 'missing-call',
    seq: 3,
    turn: 2,
    recorded: { kind: 'event', key: 'event:pa\u001b[31mid', name: 'event:paid' },
    called: null,
    location: '/srv/app/src/flows.ts:12:9',
    historyBeforeTurns: true,
    expected: 'event:paid',
    actual: null,
  };
  it('renderTimeline: a NON_DETERMINISM run shows where, what each side has, the line and the advice, in 80 columns', () => {
    const text = renderTimeline({
      ...timeline,
      run: {
        ...timeline.run,
        error: {
          name: 'CairnError',
          code: 'NON_DETERMINISM',
          message: `Run ${timeline.run.id}: ${'advice '.repeat(30)}end.`,
          data: divergence as unknown as Json,
        },
      },
    });
    for (const line of text.split('\n')) assert.ok([...line].length <= 80, `wider than 80: ${line}`);
    assert.doesNotMatch(text, RAW);
    assert.match(text, /^error\s+NON_DETERMINISM: the code and the run's history part at #3 \(turn 2\)$/m);
    assert.match(text, /^ {2}history\s+event "event:pa\\x1b\[31mid"$/m);
    assert.match(text, /^ {2}code\s+nothing \(quiet in turn 2\)$/m);
    assert.match(text, /^ {2}line\s+\/srv\/app\/src\/flows\.ts:12:9$/m);
    assert.match(text, /^ {2}note\s+recorded by a Cairn build before delivery turns/m);
    assert.match(text, /^ {2}why\s+advice advice/m);
    assert.match(text, /^\s{11}advice .*end\.$/m);
  });
  it('renderCheckReport: counts per workflow and version, at most 20 runs listed, unchecked runs with their reason, escaped', () => {
    const tally = new CheckTally();
    const base = { workflow: 'signup', version: '1', status: 'waiting' as const };
    for (let i = 0; i < 23; i++) tally.add({ ...base, runId: `run-${i}`, verdict: 'diverges', divergence: { ...divergence, runId: `run-${i}` } });
    tally.add({ ...base, runId: 'run-ok', verdict: 'compatible' });
    tally.add({ ...base, version: 'v0', runId: 'run-old', verdict: 'missing-version', reason: 'no version "v0"' });
    const text = renderCheckReport(tally, { colors: colors(false), workflows: ['signup'], cwd: '/srv/app' });
    assert.doesNotMatch(text, RAW);
    assert.match(text, /^signup\s+1\s+24\s+1\s+23\s+0\s+0$/m);
    assert.match(text, /^signup\s+v0\s+1\s+0\s+0\s+1\s+0$/m);
    assert.equal(text.match(/^run-\d+\s+#3\s+event "event:pa\\x1b\[31mid"\s+nothing \(quiet in turn 2\)\s+src\/flows\.ts:12:9 recorded by/gm)?.length, 20);
    assert.match(text, /^… and 4 more \(--json lists every run\)$/m);
    assert.match(text, /^25 runs checked: 1 compatible, 23 diverging, 1 on a version the build lacks\.$/m);
    assert.equal(tally.unfit, 24);
    assert.doesNotMatch(text, /patch marker/);
    tally.add({
      ...base,
      runId: 'run-rolled-back',
      verdict: 'diverges',
      divergence: { ...divergence, recorded: { kind: 'patch', key: 'patch:x', name: 'x' } },
    });
    assert.match(
      renderCheckReport(tally, { colors: colors(false), workflows: ['signup'], cwd: '/' }),
      /^1 history holds a patch marker this build does not reach: keep its ctx\.patched\(id\)/m,
    );
    assert.equal(
      renderCheckReport(new CheckTally(), { colors: colors(false), workflows: ['signup'], cwd: '/' }),
      'No runs in flight of signup: nothing to check.',
    );
  });
});
