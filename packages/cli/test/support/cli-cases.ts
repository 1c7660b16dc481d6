// The CLI against one real store: runs in every status made by a real engine, then each command
// run as a child process, and the store checked afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, defineWorkflow, type RunRecord, type RunSummary } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { runCairn, type CairnResult } from './run-cairn.js';
import { HOSTILE, seedRuns, type SeededRuns } from './seed-runs.js';

/** A store the CLI reaches by `url`, and that the test opens itself to seed and check. */
export interface CliTarget {
  name: string;
  /** Why it cannot run here (printed as the skip reason). */
  skip?: string;
  /**
   * Also run the cases that do not depend on the backend (usage errors, every filter, colours):
   * one backend does them (SQLite), the others run the cases where the store's answers matter.
   */
  thorough?: boolean;
  /** Prepares a fresh namespace; returns the --url and extra CLI arguments (e.g. --prefix). */
  setup(): Promise<{ url: string; args: string[] }>;
  /** Opens the store on that namespace (migrated). */
  open(): Promise<WorkflowStore>;
  teardown(): Promise<void>;
}

// Raw terminal controls must never reach stdout or stderr: ESC, BEL, 8-bit CSI, bidi override.
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

export function assertNoRawControls(result: CairnResult, what: string): void {
  assert.doesNotMatch(result.stdout, RAW_CONTROLS, `${what}: stdout carries a raw control character`);
  assert.doesNotMatch(result.stderr, RAW_CONTROLS, `${what}: stderr carries a raw control character`);
}

/** Every run id in the store, sorted (the "nothing changed" check). */
async function allRuns(store: WorkflowStore): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.runs.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    out.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

export function cliCases(target: CliTarget): void {
  describe(`cairn on ${target.name}`, { skip: target.skip ?? false }, () => {
    let store: WorkflowStore;
    let seeded: SeededRuns;
    let base: string[];
    const cairn = (...args: string[]) => runCairn([...base, ...args]);
    const ok = async (...args: string[]) => {
      const result = await cairn(...args);
      assert.equal(result.code, 0, `cairn ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
      assertNoRawControls(result, `cairn ${args.join(' ')}`);
      return result;
    };

    before(async () => {
      const { url, args } = await target.setup();
      base = ['--url', url, ...args];
      store = await target.open();
      seeded = await seedRuns(store);
    });
    after(async () => {
      await store?.close();
      await target.teardown();
    });

    it('runs: every run, newest first; filters by status (one or several), workflow and time; pages with --limit/--cursor', async () => {
      const all = JSON.parse((await ok('runs', '--json', '--limit', '100')).stdout) as { runs: RunRecord[]; nextCursor?: string };
      assert.deepEqual(all.runs.map((r) => r.id).sort(), [...seeded.all].sort());
      assert.equal(all.nextCursor, undefined);
      const failed = JSON.parse((await ok('runs', '--status', 'failed', '--json')).stdout) as { runs: RunRecord[] };
      assert.deepEqual(failed.runs.map((r) => r.id).sort(), [seeded.byStatus.failed, seeded.hostile].sort());
      // Paging: 3 + 3 + 2, no run twice, none missed; the table says how to get the next page.
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = JSON.parse((await ok('runs', '--limit', '3', '--json', ...(cursor === undefined ? [] : ['--cursor', cursor]))).stdout) as {
          runs: RunRecord[];
          nextCursor?: string;
        };
        seen.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      assert.deepEqual([...seen].sort(), [...seeded.all].sort());
      assert.equal(new Set(seen).size, seen.length);
      const waits = JSON.parse((await ok('runs', '--workflow', 'cli-waits', '--status', 'waiting', '--json')).stdout) as { runs: RunRecord[] };
      assert.deepEqual(
        waits.runs.map((r) => r.id),
        [seeded.byStatus.waiting],
      );
      if (!target.thorough) return;
      const several = JSON.parse((await ok('runs', '--status', 'pending,running', '--status', 'cancelled', '--json')).stdout) as { runs: RunRecord[] };
      assert.deepEqual(several.runs.map((r) => r.id).sort(), [seeded.byStatus.pending, seeded.byStatus.running, seeded.byStatus.cancelled].sort());
      const future = JSON.parse((await ok('runs', '--since', '2999-01-01', '--json')).stdout) as { runs: RunRecord[] };
      assert.deepEqual(future.runs, []);
      const past = JSON.parse((await ok('runs', '--until', '2000-01-01T00:00:00Z', '--json')).stdout) as { runs: RunRecord[] };
      assert.deepEqual(past.runs, []);
      const recent = JSON.parse((await ok('runs', '--since', '1h', '--json', '--limit', '100')).stdout) as { runs: RunRecord[] };
      assert.equal(recent.runs.length, seeded.all.length);

      const table = await ok('runs', '--limit', '3');
      assert.match(table.stdout, /^id\s+workflow\s+status\s+created \(UTC\)$/m);
      assert.match(table.stdout, /more: --cursor \S+/);
      for (const line of table.stdout.trimEnd().split('\n')) if (!line.startsWith('more:')) assert.ok(line.length <= 80, `wider than 80 columns: ${line}`);
    });

    it('runs --tag: one tag, several (all of them), with the other filters; tags under each run in the table and in show', async () => {
      const ids = async (...args: string[]) => (JSON.parse((await ok('runs', '--json', ...args)).stdout) as { runs: RunRecord[] }).runs.map((r) => r.id).sort();
      assert.deepEqual(await ids('--tag', 'customer=c-42'), [seeded.rich, seeded.byStatus.waiting].sort());
      assert.deepEqual(await ids('--tag', 'customer=c-42', '--tag', 'plan=pro'), [seeded.rich]);
      assert.deepEqual(await ids('-t', 'customer=c-42', '--status', 'waiting'), [seeded.byStatus.waiting]);
      assert.deepEqual(await ids('--tag', 'customer=c-4'), [], 'a prefix is not the value');
      assert.deepEqual(await ids('--tag', 'plan=pro=x'), [], 'the value is everything after the first =');
      const table = await ok('runs', '--tag', 'customer=c-42', '--tag', 'plan=pro');
      assert.match(table.stdout, /^ {2}tags customer=c-42 plan=pro$/m);
      const shown = await ok('show', seeded.rich);
      assert.match(shown.stdout, /^tags\s+customer=c-42 plan=pro$/m);
      const hostile = await ok('show', seeded.hostile);
      assert.match(hostile.stdout, /^tags\s+k\\x1b\[1m=v\\u202e$/m, 'a hostile tag is shown escaped');
    });

    it('show: the timeline of a run with a retried step, a state change, a sleep, an event and a child; --json is engine.timeline', async () => {
      const { stdout } = await ok('show', seeded.rich);
      assert.match(stdout, new RegExp(`^cli-rich ${seeded.rich}$`, 'm'));
      assert.match(stdout, /^status\s+COMPLETED after /m);
      assert.match(stdout, /^key\s+order-42$/m);
      assert.match(stdout, /^state\s+phase = "charged"$/m);
      assert.match(stdout, new RegExp(`^child\\s+${seeded.child} \\(step child:cli-child\\)$`, 'm'));
      assert.match(stdout, /^flaky\s+1 failed\s/m);
      assert.match(stdout, /first attempt fails/);
      assert.match(stdout, /^\s+2 succeeded\s/m);
      assert.match(stdout, /^nap\s+— succeeded .* sleep /m);
      assert.match(stdout, /event "approval" received \{"by":"Ada"\}/);
      assert.match(stdout, new RegExp(`child run ${seeded.child}`));
      for (const line of stdout.split('\n')) assert.ok([...line].length <= 80, `wider than 80 columns: ${line}`);

      const json = JSON.parse((await ok('show', seeded.rich, '--json')).stdout) as unknown;
      const engine = createEngine({ store, workflows: [] });
      assert.deepEqual(json, await engine.timeline(seeded.rich));
      const childView = await ok('show', seeded.child);
      assert.match(childView.stdout, new RegExp(`^parent\\s+${seeded.rich} \\(step child:cli-child\\)$`, 'm'));
    });

    it('hostile run data (escape sequences, control characters, bidi override) is shown escaped, never raw', async () => {
      const shown = await ok('show', seeded.hostile);
      assert.match(shown.stdout, /^pay\\x1b\[31m RED /m);
      assert.match(shown.stdout, /boom \\x1b\]0;pwned\\x07/);
      assert.match(shown.stdout, /k\\x1b\[1m = "out \\x9b2J \\u202e reversed"/);
      const json = await ok('show', seeded.hostile, '--json');
      // Escaped in the text, the same values once parsed.
      const timeline = JSON.parse(json.stdout) as { steps: { name: string }[]; state: Record<string, string> };
      assert.equal(timeline.steps[0]?.name, HOSTILE.step);
      assert.equal(timeline.state[HOSTILE.stateKey], HOSTILE.output);
      await ok('runs', '--limit', '100');
      if (!target.thorough) return;
      // A hostile argument comes back in an error message: escaped too.
      const id = await cairn('show', 'run\u001b]0;pwned\u0007\u009b2J');
      assert.equal(id.code, 3, id.stderr);
      assert.match(id.stderr, /run\\x1b\]0;pwned\\x07\\x9b2J/);
      assertNoRawControls(id, 'show <hostile id>');
      // Even with colours forced on, the only escapes are the CLI's own colour codes (SGR).
      const coloured = await runCairn([...base, 'show', seeded.hostile], { env: { FORCE_COLOR: '1' } });
      assert.equal(coloured.code, 0);
      const withoutSgr = coloured.stdout.replace(/\u001b\[\d+(;\d+)*m/g, '');
      assert.notEqual(withoutSgr, coloured.stdout, 'FORCE_COLOR colours the output');
      assert.doesNotMatch(withoutSgr, RAW_CONTROLS);
    });

    it('cancel: requests it (reason stored); a finished run is refused (exit 4), an unknown one is not found (exit 3)', async () => {
      const done = await ok('cancel', seeded.byStatus.waiting, '--reason', 'operator said so');
      assert.match(done.stdout, /Cancellation of run .* requested/);
      const run = await store.runs.get(seeded.byStatus.waiting);
      assert.equal(run?.cancelRequested, true);
      assert.equal(run?.cancelReason, 'operator said so');

      const before = await store.runs.get(seeded.byStatus.completed);
      const refused = await cairn('cancel', seeded.byStatus.completed);
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(refused.stderr, /already ended completed/);
      assert.deepEqual(await store.runs.get(seeded.byStatus.completed), before);
      const missing = await cairn('cancel', '0195f3a2-0000-7000-8000-000000000000');
      assert.equal(missing.code, 3, missing.stderr);
      assert.match(missing.stderr, /not found/);
    });

    it('pause and resume: a run (reason stored, shown by runs), twice is no error, an ended run is refused (exit 4), unknown: exit 3; a workflow', async () => {
      const id = seeded.byStatus.pending;
      const paused = await ok('pause', id, '--reason', 'bank down');
      assert.match(paused.stdout, /Run .* paused \(status pending, reason: bank down\)/);
      assert.deepEqual(
        { scope: (await store.runs.get(id))?.paused?.scope, reason: (await store.runs.get(id))?.paused?.reason },
        { scope: 'run', reason: 'bank down' },
      );
      const listed = JSON.parse((await ok('runs', '--json')).stdout) as { runs: RunSummary[] };
      assert.equal(listed.runs.find((r) => r.id === id)?.paused?.reason, 'bank down', 'runs --json carries the pause');
      const table = await ok('runs');
      assert.match(table.stdout, new RegExp(`^${id}\\s+\\S+\\s+paused\\s`, 'm'), 'the table shows it paused');
      const again = await ok('pause', id);
      assert.match(again.stdout, /already paused/);
      const resumed = await ok('resume', id);
      assert.match(resumed.stdout, /Run .* resumed/);
      assert.equal((await store.runs.get(id))?.paused, undefined);
      assert.match((await ok('resume', id)).stdout, /is not paused/);

      const before = await store.runs.get(seeded.byStatus.completed);
      const refused = await cairn('pause', seeded.byStatus.completed);
      assert.equal(refused.code, 4, refused.stderr);
      assert.deepEqual(await store.runs.get(seeded.byStatus.completed), before);
      const missing = await cairn('resume', '0195f3a2-0000-7000-8000-000000000000');
      assert.equal(missing.code, 3, missing.stderr);

      const workflow = (await store.runs.get(id))?.workflow as string;
      const all = await ok('pause', '--workflow', workflow, '--reason', 'maintenance');
      assert.match(all.stdout, new RegExp(`Workflow ${workflow} paused: \\d+ run\\(s\\) paused`));
      assert.equal((await store.runs.get(id))?.paused?.scope, 'workflow');
      assert.equal((await store.runs.get(seeded.byStatus.running))?.paused?.scope, 'workflow');
      const lifted = await ok('resume', '--workflow', workflow);
      assert.match(lifted.stdout, new RegExp(`Workflow ${workflow} resumed: \\d+ run\\(s\\) resumed`));
      assert.equal((await store.runs.get(id))?.paused, undefined);
      assert.equal((await store.runs.get(seeded.byStatus.running))?.paused, undefined);
      const both = await cairn('pause', id, '--workflow', workflow);
      assert.equal(both.code, 2, both.stderr);
    });

    it('runs --parent and --key: the children of a run, the run of an idempotency key', async () => {
      const children = JSON.parse((await ok('runs', '--parent', seeded.rich, '--json')).stdout) as { runs: { id: string }[] };
      assert.deepEqual(
        children.runs.map((r) => r.id),
        [seeded.child],
      );
      const keyed = JSON.parse((await ok('runs', '--workflow', 'cli-rich', '--key', seeded.key, '--json')).stdout) as { runs: { id: string }[] };
      assert.deepEqual(
        keyed.runs.map((r) => r.id),
        [seeded.rich],
      );
    });

    it('retry: a cancelled run is reopened (the reason kept, its timeline says so); a completed one is refused (exit 4), nothing changed', async () => {
      const done = await ok('retry', seeded.byStatus.cancelled, '--reason', 'customer came back');
      assert.match(done.stdout, /reopened from cancelled/);
      const run = await store.runs.get(seeded.byStatus.cancelled);
      assert.notEqual(run?.status, 'cancelled');
      assert.deepEqual(
        run?.retries?.map((r) => [r.previousStatus, r.reason]),
        [['cancelled', 'customer came back']],
      );
      const shown = await ok('show', seeded.byStatus.cancelled);
      assert.match(shown.stdout, /^retried\s+.* from cancelled, \d+ step\(s\) again\n {2}reason\s+customer came back$/m);

      const before = await store.runs.get(seeded.byStatus.completed);
      const refused = await cairn('retry', seeded.byStatus.completed);
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(refused.stderr, /only a failed or cancelled run can be retried/);
      assert.deepEqual(await store.runs.get(seeded.byStatus.completed), before);
    });

    it('fork: a new run from a step, reusing the steps before it; an unknown step is refused (exit 3), nothing created', async () => {
      const forked = await ok('fork', seeded.rich, '--from-step', 'nap');
      const id = /new run (\S+)\.$/m.exec(forked.stdout)?.[1];
      assert.ok(id, forked.stdout);
      const run = await store.runs.get(id);
      assert.deepEqual(run?.forkedFrom, { runId: seeded.rich, stepKey: 'nap' });
      assert.deepEqual((await store.steps.load(id)).map((s) => [s.key, s.status]).slice(0, 1), [['flaky', 'succeeded']]);
      const shown = await ok('show', id);
      assert.match(shown.stdout, new RegExp(`^forked\\s+from ${seeded.rich} at step nap$`, 'm'));

      const count = (await allRuns(store)).length;
      const unknown = await cairn('fork', seeded.rich, '--from-step', 'no such step');
      assert.equal(unknown.code, 3, unknown.stderr);
      const missing = await cairn('fork', seeded.rich);
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /required option '--from-step <key>' not specified/);
      assert.equal((await allRuns(store)).length, count);
    });

    it('delete: a finished run goes with everything it recorded; an active one needs --force (exit 4 without); unknown: exit 3', async () => {
      const refused = await cairn('delete', seeded.byStatus.pending);
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(refused.stderr, /is pending: cancel it first, or pass --force/);
      assert.equal((await store.runs.get(seeded.byStatus.pending))?.status, 'pending');

      await ok('delete', seeded.byStatus.failed);
      assert.equal(await store.runs.get(seeded.byStatus.failed), undefined);
      assert.deepEqual(await store.steps.load(seeded.byStatus.failed), []);
      await ok('delete', seeded.byStatus.pending, '--force');
      assert.equal(await store.runs.get(seeded.byStatus.pending), undefined);
      const again = await cairn('delete', seeded.byStatus.failed);
      assert.equal(again.code, 3, again.stderr);
    });

    it('prune: deletes the runs in the statuses asked that ended before the time; the others stay', async () => {
      const before = await allRuns(store);
      const result = await ok('prune', '--before', '2999-01-01', '--status', 'completed');
      const completed = before.filter((r) => r.status === 'completed');
      assert.ok(completed.length >= 2);
      assert.match(result.stdout, new RegExp(`^Deleted ${completed.length} runs that ended before 2999-01-01 00:00:00.000Z \\(completed\\)\\.$`, 'm'));
      const after = await allRuns(store);
      assert.deepEqual(
        after.map((r) => r.id),
        before.filter((r) => r.status !== 'completed').map((r) => r.id),
      );
      const none = await ok('prune', '--before', '2000-01-01');
      assert.match(none.stdout, /^Deleted 0 runs/m);
      assert.deepEqual(
        (await allRuns(store)).map((r) => r.id),
        after.map((r) => r.id),
      );
    });

    it('bad input: a clear message, a non-zero exit, nothing changed', { skip: target.thorough ? false : 'backend-independent: run on SQLite' }, async () => {
      const before = await allRuns(store);
      const cases: Array<[string[], RegExp]> = [
        [['runs', '--status', 'bogus'], /"bogus" is not a run status/],
        [['runs', '--tag', 'customer'], /"customer" is not a tag: use key=value/],
        [['runs', '--tag', '=c-42'], /is not a tag: use key=value/],
        [['runs', '--tag', `k=${'v'.repeat(300)}`], /TAG_LIMIT/],
        [['runs', '--limit', '0'], /must be a whole number from 1 to 1000/],
        [['runs', '--since', 'yesterday'], /is not a time/],
        [['runs', '--cursor', 'not-a-cursor'], /INVALID_INPUT/],
        [['show'], /missing required argument 'run-id'/],
        [['show', 'x'.repeat(5000)], /INVALID_INPUT/],
        [['cancel', seeded.byStatus.running, '--reason', 'x'.repeat(2000)], /INVALID_INPUT/],
        [['delete', seeded.byStatus.running, '--forse'], /unknown option '--forse'/],
        [['frobnicate'], /unknown command 'frobnicate'/],
        [['prune'], /required option '--before <time>' not specified/],
        [['prune', '--before', '1d', '--status', 'running'], /INVALID_INPUT/],
        [['fork', seeded.byStatus.completed, '--from-step', 'flaky', '--input', '{not json'], /not JSON/],
        [['retry', seeded.byStatus.running, '--reason', 'x'.repeat(2000)], /INVALID_INPUT/],
      ];
      for (const [args, message] of cases) {
        const result = await cairn(...args);
        assert.equal(result.code, 2, `cairn ${args.join(' ').slice(0, 80)}: exit ${result.code}\n${result.stderr}`);
        assert.match(result.stderr, message, `cairn ${args.join(' ').slice(0, 80)}`);
        assertNoRawControls(result, args[0] as string);
      }
      assert.deepEqual(await allRuns(store), before);
    });

    it('bulk: a dry run counts and changes nothing; cancel acts on the filter page by page with progress; list, show, continue; bad input exit 2, unknown exit 3', async () => {
      // Runs of their own (pending: a client engine starts them and nobody works them), and a decoy
      // of another workflow; with tags where the store has them.
      const tags = store.runs.setTags !== undefined;
      const waits = async (ctx: { waitForEvent(name: string): Promise<unknown> }) => ctx.waitForEvent('go');
      const client = createEngine({ store, workflows: [defineWorkflow('cli-bulk', waits), defineWorkflow('cli-bulk-decoy', waits)] });
      const start = (workflow: string, customer: string) => client.startRun(workflow, null, tags ? { tags: { customer } } : {});
      const matching = [(await start('cli-bulk', 'c-42')).id, (await start('cli-bulk', 'c-42')).id, (await start('cli-bulk', 'c-42')).id];
      const decoys = [(await start('cli-bulk-decoy', 'c-42')).id, ...(tags ? [(await start('cli-bulk', 'c-43')).id] : [])];
      await client.stop();
      const filter = ['--workflow', 'cli-bulk', ...(tags ? ['--tag', 'customer=c-42'] : [])];
      const before = await Promise.all(decoys.map((id) => store.runs.get(id)));
      const dry = await ok('bulk', 'cancel', ...filter, '--dry-run');
      assert.match(dry.stdout, /^Dry run: 3 run\(s\) match; cancel applies to 3 of them now\. Nothing was changed\.$/m);
      for (const id of matching) assert.equal((await store.runs.get(id))?.cancelRequested, false, 'the dry run changed nothing');

      const done = await ok('bulk', 'cancel', ...filter, '--reason', 'customer left', '--page-size', '2');
      assert.match(done.stderr, /^page 1: 2 matched: 2 done, 0 skipped, 0 failed$/m, 'progress after each page, on stderr');
      assert.match(done.stderr, /^page 2: 3 matched: 3 done, 0 skipped, 0 failed$/m);
      const id = /^Bulk cancel (\S+): completed$/m.exec(done.stdout)?.[1];
      assert.ok(id, done.stdout);
      assert.match(done.stdout, /3 matched: 3 done, 0 skipped, 0 failed/);
      for (const runId of matching) {
        const run = await store.runs.get(runId);
        assert.deepEqual([run?.cancelRequested, run?.cancelReason], [true, 'customer left']);
      }
      assert.deepEqual(await Promise.all(decoys.map((d) => store.runs.get(d))), before, 'decoys untouched');

      const listed = JSON.parse((await ok('bulk', 'list', '--json')).stdout) as { operations: Array<{ id: string; state: string }> };
      assert.deepEqual(
        listed.operations.map((o) => [o.id, o.state]),
        [[id, 'completed']],
      );
      assert.match((await ok('bulk', 'show', id)).stdout, new RegExp(`^Bulk cancel ${id}: completed$`, 'm'));
      const again = JSON.parse((await ok('bulk', 'continue', id, '--json')).stdout) as { counts: { done: number }; outcomes: unknown[] };
      assert.deepEqual([again.counts.done, again.outcomes], [3, []], 'a completed operation is returned as it is');
      const missing = await cairn('bulk', 'show', '0195f3a2-0000-7000-8000-000000000000');
      assert.equal(missing.code, 3, missing.stderr);
      for (const [args, message] of [
        [['bulk', 'explode'], /unknown command 'explode'/],
        [['bulk', 'cancel', '--tag', 'no-equals-sign'], /is not a tag/],
        [['bulk', 'cancel', '--status', 'asleep'], /"asleep" is not a run status/],
        [['bulk', 'delete', '--page-size', '0'], /must be a whole number from 1 to 1000/],
      ] as Array<[string[], RegExp]>) {
        const result = await cairn(...args);
        assert.equal(result.code, 2, `cairn ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
        assert.match(result.stderr, message);
      }
    });
  });
}
