/**
 * Mixed fleets during a rolling deploy (issue 27, part 6; docs/versioning.md "Mixed fleets during a
 * rolling deploy"): a worker process of build 69ed3f8 (packed in e2e/upgrade/builds/) and engines
 * of today's build on one database at once. SQLite and PostgreSQL. See
 * e2e/upgrade/README.md. The deploy, as it rolls:
 *
 * 1. An old worker runs; it opened the store its default way (migrations on open).
 * 2. Today's build opens the store and migrates it under the running old worker.
 * 3. An old worker that opens the store now (a restart, a scale-up) is refused: `STORE_ERROR`
 *    naming the first migration it does not know; the schema is left as it was.
 * 4. The running old worker and today's build work side by side: runs of every kind of the
 *    upgrade test started by each, events sent by today's build so that runs the old build started
 *    are resumed by today's and the other way round; the old build also tries to send events.
 * 5. The old worker stops; today's build finishes what is left.
 *
 * What the docs say about it is asserted: the refusal; the old build's `sendEvent` refused with
 * `STORE_ERROR`; on SQLite both builds execute runs and hand them to each other, every run ending
 * while both run; on PostgreSQL the old worker records no step (each execution it claims is
 * abandoned with `STORE_ERROR`), so runs it claims stall until its lease expires. On both, a run
 * ends only as expected: completed with its exact output and each body run once, where a failed
 * step's `compensate` follows the rules of 69ed3f8 when the old build ran the step or resumed the
 * run past it; or, for the fan-out of 2-step branches alone, failed by the old build's replay with
 * its own `NON_DETERMINISM`, which today's build's `retryRun` then completes exactly. Once the old
 * worker is gone, every run completes exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createEngine, defineWorkflow } from '@cairn/core';
import { kyselyPostgres, kyselyStore } from '../proof/deps.js';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, uniqueName, usePostgres } from '../src/services/index.js';
import { layOutOldBuild, listBuilds, removeDir, type UpgradeDb } from '../upgrade/harness.js';
import {
  FLEET_KINDS,
  NEW_WORKER,
  OLD_FANOUT_WORKFLOW,
  OldWorker,
  addOldWorker,
  driveEvents,
  fleetSummary,
  handedOver,
  judgeFleet,
  oldSide,
  schemaFingerprint,
  todaySide,
  waitForEnd,
  type FleetRun,
  type FleetVerdict,
  type OldSendProbe,
  type Side,
} from '../upgrade/mixed-fleet.js';
import { upgradeWorkflows, type DefineWorkflow } from '../upgrade/workflows.js';

/** Runs per kind and per build that starts them: 15 kinds x 2 x 2 = 60 top-level runs, plus 8 children. */
const PER_SIDE = 2;
/**
 * How long both builds run side by side at most (step 4) before the old worker stops: on SQLite,
 * until every run has ended (which the test asserts), on PostgreSQL long enough for the old worker
 * to claim and abandon runs of every kind.
 */
const MIXED_MS = { sqlite: 10_000, postgres: 3_000 };
/** How long today's build then has to finish every run (step 5). */
const FINISH_MS = 15_000;
/**
 * The old worker's lease (default 30 s) is 2 s, so a run whose execution it abandons comes back
 * within the test's time, and its recovery pass runs every 100 ms. Today's engine with workers
 * makes no recovery pass of its own while both run (its interval is longer than the test): it
 * executes the runs it starts and those its own events wake, and a run made due in the store by an
 * event sent through `api` is resumed by the old worker (on SQLite; on PostgreSQL the event's
 * signal reaches today's listening worker too). Once the old worker stops, the test runs today's
 * recovery passes itself, every `FINISH_RECOVERY_MS`.
 */
const OLD_TIMINGS = { recoveryIntervalMs: 100, leaseMs: 2_000 };
const TODAY_RECOVERY_MS = 600_000;
const FINISH_RECOVERY_MS = 200;
/** The workflow whose events the old build also tries to send. */
const PROBED = 'upg-event';
/** On SQLite, each build must have executed, and handed to the other, at least this many runs. */
const AT_LEAST = 4;

/**
 * The build whose behaviour beside today's the docs state (docs/versioning.md). A newer packed build
 * (the 0.2.0 release) gets a case of its own when its expectations are known.
 */
const MIXED_BUILD = '69ed3f8';
const build = listBuilds().find((b) => b.manifest.ref === MIXED_BUILD);
const pg = await usePostgres();
after(() => stopSharedServices());

const lines = (t: { diagnostic(message: string): void }, text: string) => {
  for (const line of text.split('\n')) t.diagnostic(line);
};

function describeFleet(verdicts: FleetVerdict[]): string {
  const count = (outcome: FleetVerdict['outcome']) => verdicts.filter((v) => v.outcome === outcome).length;
  return (
    `${count('ok')}/${verdicts.length} runs ended right, ${count('old-fanout-divergence')} failed by the old build's fan-out replay, ` +
    `${count('pending')} not ended, ${count('wrong')} wrong; executed by the old build ${verdicts.filter((v) => v.touchedBy.includes('old')).length}, ` +
    `by today's ${verdicts.filter((v) => v.touchedBy.includes('new')).length}; handed old -> today ${handedOver(verdicts, 'old', 'new')}, today -> old ${handedOver(verdicts, 'new', 'old')}`
  );
}

async function mixedFleetCase(t: { diagnostic(message: string): void }, db: UpgradeDb, openToday: () => Promise<WorkflowStore>): Promise<void> {
  const root = layOutOldBuild(build!);
  addOldWorker(root);
  const log = join(root, 'side-effects.log');
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  let old: OldWorker | undefined;
  let store: WorkflowStore | undefined;
  let engine: Engine | undefined;
  let api: Engine | undefined;
  const todayLogs: string[] = [];
  let stopRecovering = () => {};
  try {
    // 1. The old worker, on a database it migrates itself.
    const first = await OldWorker.start(root, db, log, OLD_TIMINGS);
    assert.ok(first instanceof OldWorker, `the old build could not open a new database: ${JSON.stringify(first)}`);
    old = first;

    // 2. Today's build migrates the database under it.
    store = await openToday();
    t.diagnostic(`${elapsed()}: old worker running; today's build opened and migrated the database`);

    // 3. An old worker opening the store now is refused, and writes nothing.
    const before = await schemaFingerprint(db);
    const second = await OldWorker.start(root, db, log, OLD_TIMINGS);
    if (second instanceof OldWorker) await second.stop();
    assert.ok(!(second instanceof OldWorker), "an old worker opened a store migrated by today's build");
    t.diagnostic(`old worker opening the migrated store: refused ${second.error.name} ${second.error.code}: ${second.error.message}`);
    assert.equal(second.error.name, 'CairnError');
    assert.equal(second.error.code, 'STORE_ERROR');
    assert.match(second.error.message, /^Cairn migrations failed: corrupted migrations: previously executed migration cairn_0003_step_turn is missing$/);
    assert.equal(await schemaFingerprint(db), before, 'the refused open changed the schema');

    // 4. Side by side.
    const workflows = upgradeWorkflows(defineWorkflow as DefineWorkflow, log) as Parameters<typeof createEngine>[0]['workflows'];
    const logger = {
      warn: (...args: unknown[]) => void todayLogs.push(`warn: ${JSON.stringify(args)}`),
      error: (...args: unknown[]) => void todayLogs.push(`error: ${JSON.stringify(args)}`),
    };
    engine = createEngine({ store, workflows, workerId: NEW_WORKER, recoveryIntervalMs: TODAY_RECOVERY_MS, stopGraceMs: 5000, logger });
    await engine.start();
    api = createEngine({ store, workflows, workerId: 'api', logger });
    await api.start({ workers: false });
    const oldWorker = old;
    const senders = { old: oldSide(oldWorker), new: todaySide(engine), api: todaySide(api) };
    let oldStopped = false;

    const planned = FLEET_KINDS.flatMap((spec) => Array.from({ length: 2 * PER_SIDE }, (_, i) => ({ spec, starter: (i % 2 === 0 ? 'old' : 'new') as Side })));
    const runs: FleetRun[] = await Promise.all(
      planned.map(async ({ spec, starter }, i) => ({
        runId: await senders[starter].start(spec.workflow, i + 1),
        kind: spec.kind,
        workflow: spec.workflow,
        n: i + 1,
        starter,
      })),
    );
    t.diagnostic(`${elapsed()}: ${runs.length} runs started, half by each build`);

    const children: FleetRun[] = [];
    const sendProblems = new Map<string, string[]>();
    const probes: OldSendProbe[] = [];
    const probeSender = {
      start: senders.old.start,
      send: (runId: string, name: string, payload: unknown) => (oldStopped ? Promise.resolve('skipped') : senders.old.send(runId, name, payload)),
    };
    const driving = Promise.all(
      runs.map(async (run) => {
        const spec = FLEET_KINDS.find((k) => k.workflow === run.workflow)!;
        try {
          const problems = await driveEvents(engine!, { ...senders, old: probeSender }, run, spec, children, probes, PROBED, MIXED_MS[db.kind] + FINISH_MS);
          if (problems.length > 0) sendProblems.set(run.runId, problems);
        } catch (error) {
          sendProblems.set(run.runId, [(error as Error).message]);
        }
      }),
    );
    await Promise.race([
      driving.then(() => waitForEnd(engine!, [...runs, ...children], MIXED_MS[db.kind])),
      new Promise((resolve) => setTimeout(resolve, MIXED_MS[db.kind])),
    ]);
    const mixed = await judgeFleet(engine, [...runs, ...children], log, sendProblems);
    t.diagnostic(`${elapsed()}: while both builds ran: ${describeFleet(mixed)}`);
    lines(t, fleetSummary(mixed));
    const oldErrors = new Map<string, number>();
    for (const entry of oldWorker.logs) {
      const reason = `${entry.level}: ${entry.message} ${entry.data ?? ''}`.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>');
      oldErrors.set(reason, (oldErrors.get(reason) ?? 0) + 1);
    }
    for (const [reason, count] of oldErrors) t.diagnostic(`old build logged ${count}x ${reason}`);
    const probeOutcomes = new Map<string, number>();
    for (const probe of probes.filter((p) => p.result !== 'skipped')) {
      const outcome = probe.error ? `${probe.error.name} ${probe.error.code}: ${probe.error.message}` : `returned ${JSON.stringify(probe.result)}`;
      probeOutcomes.set(outcome, (probeOutcomes.get(outcome) ?? 0) + 1);
    }
    for (const [outcome, count] of probeOutcomes) t.diagnostic(`old build's sendEvent ${count}x: ${outcome}`);
    const compensatedByOld = mixed.filter((v) => v.run.workflow === 'upg-compensate' && v.run.starter === 'new' && v.touchedBy.includes('old')).length;
    t.diagnostic(`runs of today's build whose caught step failure the old build compensated when it resumed them: ${compensatedByOld}`);

    // 5. The old worker stops; today's build finishes, and retries the runs the old one failed.
    oldStopped = true;
    await oldWorker.stop();
    const recovering = setInterval(() => void engine!.recover().catch(() => undefined), FINISH_RECOVERY_MS);
    stopRecovering = () => clearInterval(recovering);
    await driving;
    await waitForEnd(engine, [...runs, ...children], FINISH_MS);
    const stopped = await judgeFleet(engine, [...runs, ...children], log, sendProblems);
    const failedByOld = stopped.filter((v) => v.outcome === 'old-fanout-divergence');
    for (const v of failedByOld) await engine.retryRun(v.run.runId, { reason: 'failed by a 69ed3f8 worker during a rolling deploy' });
    await waitForEnd(engine, [...runs, ...children], FINISH_MS);
    const final = await judgeFleet(engine, [...runs, ...children], log, sendProblems);
    t.diagnostic(`${elapsed()}: after the old worker stopped and ${failedByOld.length} runs were retried: ${describeFleet(final)}`);
    if (final.some((v) => v.outcome !== 'ok')) lines(t, fleetSummary(final));
    for (const line of todayLogs.slice(0, 10)) t.diagnostic(`today's build ${line}`);

    // Never a wrong result, on either database: every run ends right, or (one kind, documented) is
    // failed by the old build's replay with its own NON_DETERMINISM, wrote nothing wrong, and
    // completes right when today's build retries it.
    for (const verdicts of [mixed, stopped, final]) {
      const wrong = verdicts.filter((v) => v.outcome === 'wrong');
      assert.equal(wrong.length, 0, `${wrong.length} runs went wrong:\n${fleetSummary(verdicts)}`);
    }
    assert.equal(final.filter((v) => v.outcome !== 'ok').length, 0, `runs did not complete right after the old worker stopped:\n${fleetSummary(final)}`);

    // The old build's sendEvent is refused: the migrated events table has a NOT NULL `seq` it does not write.
    const sent = probes.filter((p) => p.result !== 'skipped');
    assert.ok(sent.length >= 2, `the old build tried only ${sent.length} events`);
    for (const probe of sent) {
      assert.equal(probe.error?.code, 'STORE_ERROR', `the old build's sendEvent: ${JSON.stringify(probe)}`);
      assert.match(probe.error.message, /^events\.deliver failed: .*(cairn_events\.seq|"seq")/);
    }

    const byOld = mixed.filter((v) => v.touchedBy.includes('old')).length;
    if (db.kind === 'sqlite') {
      // Both builds execute runs, and resume what the other recorded; every run ends right while both run.
      const pending = mixed.filter((v) => v.outcome === 'pending');
      assert.equal(pending.length, 0, `runs had not ended while both builds ran:\n${fleetSummary(mixed)}`);
      assert.ok(byOld >= AT_LEAST, `the old build executed only ${byOld} runs`);
      assert.ok(mixed.filter((v) => v.touchedBy.includes('new')).length >= AT_LEAST, "today's build executed too few runs");
      assert.ok(handedOver(mixed, 'old', 'new') >= AT_LEAST, "too few runs handed from the old build to today's");
      assert.ok(handedOver(mixed, 'new', 'old') >= AT_LEAST, "too few runs handed from today's build to the old one");
      // Runs today's build started and the old worker resumed: a caught failure compensated by the
      // old build (counted exactly by `expectedInFleet`), a fan-out of 2-step branches failed by it.
      const resumedByOld = (workflow: string) => mixed.filter((v) => v.run.workflow === workflow && v.run.starter === 'new' && !v.run.parent);
      for (const v of resumedByOld('upg-compensate')) assert.deepEqual(v.sequence, ['new', 'old'], `${v.run.runId}: ${v.problems.join('; ')}`);
      for (const v of resumedByOld(OLD_FANOUT_WORKFLOW)) assert.equal(v.outcome, 'old-fanout-divergence', `${v.run.runId}: ${v.problems.join('; ')}`);
    } else {
      // The old worker records no step: each execution it claims is abandoned with STORE_ERROR
      // (its step-insert function's signature is gone), holding the run until its lease expires.
      assert.equal(byOld, 0, `the old build recorded attempts of ${byOld} runs on PostgreSQL`);
      const abandoned = oldWorker.logs.filter((entry) => entry.message.endsWith('execution abandoned'));
      assert.ok(abandoned.length >= PER_SIDE, `the old worker abandoned only ${abandoned.length} executions`);
      for (const entry of oldWorker.logs.filter((e) => e.level === 'error')) {
        assert.match(entry.message, /execution abandoned$/);
        assert.match(entry.data ?? '', /"code":"STORE_ERROR","message":"The stored routine cairn_step_(insert|transition) does not exist/);
      }
    }
  } finally {
    stopRecovering();
    await old?.stop().catch(() => old?.kill());
    await api?.stop();
    await engine?.stop();
    await store?.close();
    removeDir(root);
  }
}

describe("mixed fleet: a worker of an earlier build and today's build on one store during a rolling deploy", () => {
  it('has an earlier build packed', () => {
    assert.ok(build, `no build ${MIXED_BUILD} under e2e/upgrade/builds/ (scripts/upgrade/pack-build.sh makes one)`);
  });

  it(`${build?.manifest.ref} + today, SQLite`, { timeout: 90_000, ...(build ? {} : { skip: 'no build' }) }, async (t) => {
    const file = join(mkdtempSync(join(tmpdir(), 'cairn-mixed-sqlite-')), 'cairn.sqlite');
    try {
      const { openSqliteStore } = await kyselyStore();
      await mixedFleetCase(t, { kind: 'sqlite', file }, () => openSqliteStore(file));
    } finally {
      removeDir(join(file, '..'));
    }
  });

  it(`${build?.manifest.ref} + today, PostgreSQL`, {
    timeout: 90_000,
    ...(pg.skipped ? { skip: pg.reason } : build ? {} : { skip: 'no build' }),
  }, async (t) => {
    if (pg.skipped) return;
    const url = await createPostgresDatabase(pg.url, uniqueName('mixed'));
    try {
      const { openPostgresStore } = await kyselyPostgres();
      await mixedFleetCase(t, { kind: 'postgres', url }, () => openPostgresStore(url));
    } finally {
      await dropPostgresDatabase(url);
    }
  });
});
