import assert from 'node:assert/strict';
import { CairnError, defineWorkflow, type DoctorReport, type Engine, type AnyWorkflowDefinition } from '@cairn/core';
import { uuidv7 } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { CrashAt } from '../fixtures/crash-at.js';
import { WORLD_TIMINGS, engineWorld, type EngineWorld } from './engine-world.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Past every default threshold of the doctor but the event wait's (24 h).
const LATE = 16 * MINUTE;

/**
 * The operator's process: an engine with workers (a repair's dispatch reaches them) whose recovery
 * loop does not run during the case, so what is stuck stays stuck until the doctor repairs it.
 */
const operator = (w: EngineWorld, workflows: readonly AnyWorkflowDefinition[]): Promise<Engine> => w.startEngine(workflows, { recoveryIntervalMs: DAY });

/** `code runId` of every finding, sorted, for exact comparisons. */
const found = (report: DoctorReport): string[] => report.findings.map((f) => `${f.code} ${f.runId ?? '-'}`).sort();

function assertClean(report: DoctorReport, what: string): void {
  assert.deepEqual(report.findings, [], `${what}: ${JSON.stringify(report.findings, null, 2)}`);
  assert.equal(report.remaining, 0, what);
  assert.deepEqual(report.truncated, [], what);
}

/** Every finding was repaired, and each says what was done. */
function assertAllFixed(report: DoctorReport): void {
  assert.ok(report.findings.length > 0);
  for (const finding of report.findings) {
    assert.equal(finding.fixed, true, JSON.stringify(finding));
    assert.equal(typeof finding.action, 'string');
  }
  assert.equal(report.remaining, 0);
}

/** A parent run waiting in `ctx.child` for a child that waits for the event `go`. */
async function parentWithWaitingChild(env: CaseEnv, parentName: string, kidName: string) {
  const kid = defineWorkflow(kidName, async (ctx) => ctx.waitForEvent('go'));
  const parent = defineWorkflow(parentName, async (ctx) => ctx.child(kid, null));
  const w = await engineWorld(env, [parent, kid]);
  const { id } = await w.engine.startRun(parent, null);
  let childId = '';
  await w.runUntil('the child waits', async () => {
    childId = (await w.raw.steps.load(id)).find((s) => s.kind === 'child')?.childRunId ?? '';
    return childId !== '' && (await w.raw.steps.load(childId)).some((s) => s.kind === 'event');
  });
  return { w, parent, kid, id, childId };
}

/** Engine scenarios: the doctor finds each kind of stuck state made by real means, and repairs what is safe. */
export const doctorGroup: CaseGroup = caseGroup('engine.doctor', 'engine: the doctor', [
  conformanceCase('a healthy store is clean, and bad options are refused before anything is read', async (env) => {
    const wf = defineWorkflow('doc-healthy', async (ctx) => ctx.step('a', () => 1));
    const w = await engineWorld(env, [wf]);
    await w.runToEnd((await w.engine.startRun(wf, null)).id);
    assertClean(await w.engine.doctor(), 'after a completed run');
    const bad: Array<[unknown, string]> = [
      [{ fix: 'yes' }, 'doctor fix'],
      [{ now: -1 }, 'doctor now'],
      [{ thresholds: { overdueMs: -5 } }, 'doctor thresholds.overdueMs'],
      [{ thresholds: { overdue: 5 } }, 'doctor thresholds'],
      [{ limits: { runs: 0 } }, 'doctor limits.runs'],
      [{ limits: { stepLoads: 1.5 } }, 'doctor limits.stepLoads'],
      [{ colour: true }, 'doctor options'],
      ['fix', 'doctor options'],
    ];
    for (const [options, argument] of bad) {
      await w.settle();
      w.store.reset();
      await assert.rejects(
        w.engine.doctor(options as never),
        (error: unknown) => CairnError.is(error, 'INVALID_INPUT') && error.message.includes(argument),
        JSON.stringify(options),
      );
      assert.deepEqual(w.store.calls, [], `${JSON.stringify(options)}: refused before any store call`);
    }
  }),

  conformanceCase('lease-expired: a run whose worker died mid-step is reported, --fix dispatches it, then the store is clean', async (env) => {
    const wf = defineWorkflow('doc-lease', async (ctx) => {
      const a = await ctx.step('a', () => 'a');
      return `${a}-done`;
    });
    // The process crashes right after the step body: the run stays `running` under its lease.
    const crash = new CrashAt('after-step-body');
    const w = await engineWorld(env, [wf], { faults: crash });
    const { id } = await w.engine.startRun(wf, null);
    await w.runUntil('the crash', async () => crash.crashed);
    await w.engine.stop();
    const stuck = await w.raw.runs.get(id);
    assert.equal(stuck?.status, 'running');
    await w.clock.advance(WORLD_TIMINGS.leaseMs + LATE);

    const ops = await operator(w, [wf]);
    const report = await ops.doctor();
    assert.deepEqual(found(report), [`lease-expired ${id}`]);
    const [finding] = report.findings;
    assert.equal(finding?.severity, 'error');
    assert.equal(finding?.fixable, true);
    assert.equal(finding?.fixed, undefined, 'a read-only pass repairs nothing');
    assert.match(finding?.message ?? '', /lease expired/);
    assert.equal((await w.raw.runs.get(id))?.fence, stuck?.fence, 'a read-only pass writes nothing');

    assertAllFixed(await ops.doctor({ fix: true }));
    assert.equal((await w.runToEnd(id)).output, 'a-done');
    assertClean(await ops.doctor(), 'after the repair');
  }),

  conformanceCase('run-not-dispatched: a run whose job was lost is reported once overdue, and --fix starts it', async (env) => {
    const wf = defineWorkflow('doc-undispatched', async (ctx) => ctx.step('a', () => 'ran'));
    // Its first job goes to a queue nobody consumes, and no recovery loop runs.
    const w = await engineWorld(env, [wf], { noWorkers: true });
    const { id } = await w.engine.startRun(wf, null);
    const ops = await operator(w, [wf]);
    assertClean(await ops.doctor(), 'a fresh pending run is not stuck');
    await w.clock.advance(LATE);
    const report = await ops.doctor();
    assert.deepEqual(found(report), [`run-not-dispatched ${id}`]);
    assert.match(report.findings[0]?.message ?? '', /never started/);
    // From a process with no workers and no shared queue, a dispatch would reach nobody: not made.
    const idle = await w.engine.doctor({ fix: true });
    assert.deepEqual(
      idle.findings.map((f) => [f.code, f.fixed]),
      [['run-not-dispatched', false]],
    );
    assert.match(idle.findings[0]?.action ?? '', /runs no workers/);
    assert.equal(idle.remaining, 1);
    assertAllFixed(await ops.doctor({ fix: true }));
    assert.equal((await w.runToEnd(id)).output, 'ran');
    assertClean(await ops.doctor(), 'after the repair');
  }),

  conformanceCase('step-not-started: a queued step no step worker took is reported, and --fix sends its job again', async (env) => {
    const wf = defineWorkflow('doc-queued', async (ctx) => ctx.step('work', () => 'worked', { queued: true }));
    // Executed inline by a process with no workers: the step's job waits on a queue nobody reads,
    // and the run's own re-dispatch of it is a day away.
    const w = await engineWorld(env, [wf], { noWorkers: true, timings: { dispatchTimeoutMs: DAY } });
    const { id } = await w.engine.startRun(wf, null, { mode: 'inline' });
    await w.runUntil('the step is scheduled', async () => (await w.raw.steps.load(id)).some((s) => s.status === 'scheduled'));
    await w.clock.advance(LATE);
    const ops = await operator(w, [wf]);
    const report = await ops.doctor();
    assert.deepEqual(found(report), [`step-not-started ${id}`]);
    assert.match(report.findings[0]?.message ?? '', /"work"/);
    assertAllFixed(await ops.doctor({ fix: true }));
    assert.equal((await w.runToEnd(id)).output, 'worked');
    assertClean(await ops.doctor(), 'after the repair');
  }),

  conformanceCase('parent-not-woken: a parent whose child ended without waking it is reported, and --fix wakes it', async (env) => {
    const { w, parent, kid, id, childId } = await parentWithWaitingChild(env, 'doc-parent', 'doc-kid');
    // A process ends the child and dies before waking the parent (as a crash between the two would).
    const claimed = await w.raw.runs.claim(childId, 'doomed-worker', WORLD_TIMINGS.leaseMs, w.clock.now());
    assert.ok(claimed);
    await w.raw.runs.transition(childId, claimed.fence, { from: ['running'], to: 'completed', output: 'ended elsewhere' }, w.clock.now());
    await w.clock.advance(LATE);
    assert.equal((await w.raw.runs.get(id))?.status, 'waiting');
    const report = await w.engine.doctor();
    assert.deepEqual(found(report), [`parent-not-woken ${id}`]);
    // The repair is the wake: made even from a process without workers (a CLI), after which the
    // running engine's recovery loop dispatches the parent.
    const cli = await w.startEngine([parent, kid], { noWorkers: true });
    const fixed = await cli.doctor({ fix: true });
    assertAllFixed(fixed);
    assert.match(fixed.findings[0]?.action ?? '', /woke the run/);
    assert.equal((await w.runToEnd(id)).output, 'ended elsewhere');
    assertClean(await w.engine.doctor(), 'after the repair');
  }),

  conformanceCase('child-orphaned: a child whose parent was deleted is reported; nothing is repaired', async (env) => {
    const { w, id, childId } = await parentWithWaitingChild(env, 'doc-deleted-parent', 'doc-orphan');
    assert.equal(await w.engine.deleteRun(id, { force: true }), true);
    const later = w.clock.now() + LATE;
    const report = await w.engine.doctor({ now: later, fix: true });
    assert.deepEqual(found(report), [`child-orphaned ${childId}`]);
    assert.equal(report.findings[0]?.fixable, false);
    assert.equal(report.findings[0]?.fixed, undefined, 'an unfixable finding is left alone by --fix');
    assert.equal(report.remaining, 1);
    assert.equal((await w.raw.runs.get(childId))?.status, 'waiting');
    await w.engine.cancel(childId);
    await w.runToEnd(childId);
    assertClean(await w.engine.doctor({ now: later }), 'after the operator cancelled it');
  }),

  conformanceCase('version-unregistered / version-superseded: runs pinned to versions no current engine registered', async (env) => {
    const v1 = defineWorkflow('doc-versions', async () => 1, { version: 'v1' });
    const v2 = defineWorkflow('doc-versions', async () => 2, { version: 'v2' });
    const w = await engineWorld(env, [v1], { noWorkers: true });
    const t0 = w.clock.now();
    // Runs another deploy wrote (no timer: only the version is wrong with them).
    const onV1 = (await w.raw.runs.create({ id: uuidv7(t0), workflow: 'doc-versions', version: 'v1', input: null }, t0)).run;
    const onGone = (await w.raw.runs.create({ id: uuidv7(t0), workflow: 'doc-versions', version: 'v-gone', input: null }, t0)).run;
    await w.clock.advance(2 * MINUTE);
    // The next deploy registers v2 only.
    const ops = await w.startEngine([v2], { noWorkers: true });
    const report = await ops.doctor({ now: t0 + LATE, fix: true });
    assert.deepEqual(found(report), [`version-superseded ${onV1.id}`, `version-unregistered ${onGone.id}`].sort());
    const bySeverity = Object.fromEntries(report.findings.map((f) => [f.code, f.severity]));
    assert.deepEqual(bySeverity, { 'version-superseded': 'warning', 'version-unregistered': 'error' });
    assert.ok(report.findings.every((f) => !f.fixable && f.fixed === undefined));
    assert.equal(report.remaining, 2);
  }),

  conformanceCase('event-wait-unbounded: a wait with no timeout in a run with no deadline is reported after a day', async (env) => {
    const wf = defineWorkflow('doc-forever', async (ctx) => ctx.waitForEvent('approval'));
    const bounded = defineWorkflow('doc-bounded', async (ctx) => ctx.waitForEvent('approval', { timeout: '30d' }));
    const w = await engineWorld(env, [wf, bounded]);
    const { id } = await w.engine.startRun(wf, null);
    const other = await w.engine.startRun(bounded, null);
    await w.runUntil('both wait', async () => (await w.raw.steps.load(id)).length === 1 && (await w.raw.steps.load(other.id)).length === 1);
    assertClean(await w.engine.doctor({ now: w.clock.now() + 23 * HOUR }), 'before the threshold');
    const report = await w.engine.doctor({ now: w.clock.now() + 25 * HOUR });
    assert.deepEqual(found(report), [`event-wait-unbounded ${id}`]);
    assert.match(report.findings[0]?.message ?? '', /"approval"/);
    assert.equal(report.findings[0]?.severity, 'warning');
    await w.engine.sendEvent(id, 'approval', 'yes');
    assert.equal((await w.runToEnd(id)).output, 'yes');
    await w.engine.cancel(other.id);
    await w.runToEnd(other.id);
    assertClean(await w.engine.doctor({ now: w.clock.now() + 25 * HOUR }), 'after the event came');
  }),

  conformanceCase('reads are capped: with limits of 1 the doctor reports what it read and names the truncated reads', async (env) => {
    const wf = defineWorkflow('doc-capped', async (ctx) => ctx.waitForEvent('never'));
    const w = await engineWorld(env, [wf]);
    const ids = [(await w.engine.startRun(wf, null)).id, (await w.engine.startRun(wf, null)).id];
    await w.runUntil('both wait', async () => (await Promise.all(ids.map((id) => w.raw.steps.load(id)))).every((s) => s.length === 1));
    const report = await w.engine.doctor({ now: w.clock.now() + 2 * DAY, limits: { runs: 1, stepLoads: 1 } });
    assert.equal(report.findings.length, 1);
    assert.ok(
      report.truncated.some((t) => t.startsWith('active runs')),
      JSON.stringify(report.truncated),
    );
    const full = await w.engine.doctor({ now: w.clock.now() + 2 * DAY });
    assert.deepEqual(found(full), ids.map((id) => `event-wait-unbounded ${id}`).sort());
    assert.deepEqual(full.truncated, []);
  }),
]);
