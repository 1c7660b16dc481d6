// The roster behind "one listening worker claims each signalled run" (decision 40), on its own:
// who owns a run, how a dead member is dropped, and when a busy worker says `here` again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkerRoster } from '../src/engine/wakeups/worker-roster.js';

const runIds = Array.from({ length: 200 }, (_, i) => `run-${i}`);

describe('WorkerRoster', () => {
  it('every worker with the same roster picks the same owner, and the runs spread over the members', () => {
    const ids = ['a', 'b', 'c', 'd'];
    const rosters = ids.map((id) => {
      const roster = new WorkerRoster(id, ['wf'], 0);
      for (const other of ids) if (other !== id) roster.add(other, ['wf']);
      return roster;
    });
    const owners = new Map<string, number>();
    for (const runId of runIds) {
      const claimers = rosters.filter((roster) => roster.claims(runId, 'wf', 0));
      assert.equal(claimers.length, 1, `${runId}: one claimer`);
      const owner = ids[rosters.indexOf(claimers[0]!)]!;
      owners.set(owner, (owners.get(owner) ?? 0) + 1);
    }
    // 200 runs over 4 members: each gets a share (50 expected).
    for (const id of ids) assert.ok((owners.get(id) ?? 0) >= 25, `${id} owns ${owners.get(id) ?? 0} of 200`);
  });

  it('a member that does not run the workflow is never the owner', () => {
    const roster = new WorkerRoster('a', ['wf'], 0);
    roster.add('b', ['other']);
    assert.ok(runIds.every((runId) => roster.claims(runId, 'wf', 0)));
  });

  it('drops a member once a run signalled to it is still due a grace later', () => {
    const roster = new WorkerRoster('a', ['wf'], 0);
    roster.add('ghost', ['wf']);
    const handed = runIds.find((runId) => !roster.claims(runId, 'wf', 0))!;
    roster.overdue(handed, 500, 1000);
    assert.equal(roster.size, 2, 'not yet a grace later');
    roster.overdue(handed, 1000, 1000);
    assert.equal(roster.size, 1);
    assert.ok(runIds.every((runId) => roster.claims(runId, 'wf', 2000)));
  });

  it('a worker that claims signalled runs says `here` again once per period; an idle one never', () => {
    const busy = new WorkerRoster('a', ['wf'], 0);
    const idle = new WorkerRoster('b', ['wf'], 0);
    assert.ok(busy.claims('run-1', 'wf', 10));
    assert.equal(busy.announceDue(20_000, 30_000), false, 'within the period');
    assert.equal(busy.announceDue(30_000, 30_000), true);
    assert.equal(busy.announceDue(90_000, 30_000), false, 'nothing claimed since');
    assert.equal(idle.announceDue(90_000, 30_000), false);
  });
});
