import assert from 'node:assert/strict';
import { checkWorkflowCode, type Json } from '@cairn/core';
import { FAULT_POINTS, type FaultPoint } from '@cairn/core/testing';
import { approve, defineGraph, GraphError, type GraphSpec, graphMarkerOf, nodeStates, ref } from '@cairn/graph';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { CrashOnceAtSite } from '../fixtures/crash-at.js';
import { assertEachStepOnce } from '../adversarial/duplicate-delivery.js';
import { engineWorld } from './engine-world.js';

/** A graph with every structural feature: parallel start, a branch, a join, a forEach, a sleep, an error edge. */
const SHAPES: GraphSpec = {
  start: ['a', 'b'],
  nodes: {
    a: { action: 'double', input: { n: ref('input.n') }, next: { branch: [{ when: { gt: [ref('a.n'), 10] }, to: 'big' }], otherwise: 'small' } },
    b: { action: 'double', input: { n: 1 }, next: 'join' },
    big: { action: 'double', input: { n: ref('a.n') }, next: 'join' },
    small: { action: 'fail', onError: 'recover' },
    recover: { action: 'double', input: { n: 0 }, next: 'join' },
    join: { forEach: { items: ref('input.list'), action: 'double', input: { n: ref('item') }, concurrency: 2 }, next: 'nap' },
    nap: { sleep: '1m' },
  },
};

function shapesGraph(ran: Record<string, number>, name = 'graph-shapes') {
  const count = (key: string) => (ran[key] = (ran[key] ?? 0) + 1);
  return defineGraph(name, SHAPES, {
    actions: {
      double: (input, c) => {
        count(c.key);
        return { n: (input as { n: number }).n * 2 };
      },
      fail: (_input, c) => {
        count(c.key);
        throw new Error('planned');
      },
    },
  });
}

const BIG_OUTPUT = {
  a: { n: 22 },
  b: { n: 2 },
  big: { n: 44 },
  join: [{ n: 2 }, { n: 4 }, { n: 6 }],
  nap: null,
};
const SMALL_OUTPUT = {
  a: { n: 4 },
  b: { n: 2 },
  small: { error: { code: 'STEP_FAILED', message: 'planned' } },
  recover: { n: 0 },
  join: [{ n: 2 }, { n: 4 }, { n: 6 }],
  nap: null,
};

async function crashGraphAt(env: CaseEnv, point: FaultPoint): Promise<void> {
  const probe = new CrashOnceAtSite();
  const dry = await engineWorld(env, [shapesGraph({})], { faults: probe });
  const dryRun = await dry.runToEnd((await dry.engine.startRun('graph-shapes', { n: 11, list: [1, 2, 3] })).id);
  assert.deepEqual(dryRun.output, BIG_OUTPUT);
  await dry.engine.stop();
  const sites = [...new Map(probe.hits.filter((h) => h.point === point).map((h) => [`${h.stepKey}`, { point, stepKey: h.stepKey }])).values()];
  assert.ok(sites.length > 0, `the graph never hit ${point}`);
  for (const target of sites) {
    const ran: Record<string, number> = {};
    const wf = shapesGraph(ran);
    const faults = new CrashOnceAtSite(target);
    const w = await engineWorld(env, [wf], { faults });
    const handle = await w.engine.startRun(wf, { n: 11, list: [1, 2, 3] });
    await w.runUntil(`a crash at ${point} ${target.stepKey ?? '(run)'}`, async () => faults.crashed !== undefined);
    await w.engine.stop();
    const survivor = await w.startEngine([wf]);
    const run = await w.runToEnd(handle.id);
    const where = `after a crash at ${point} ${target.stepKey ?? '(run)'}`;
    assert.equal(run.status, 'completed', where);
    assert.deepEqual(run.output, BIG_OUTPUT, where);
    await assertEachStepOnce(w, handle.id);
    for (const [key, count] of Object.entries(ran)) assert.ok(count <= 2, `${where}: action ${key} ran ${count} times`);
    await survivor.stop();
  }
}

/**
 * Engine scenarios: graph workflows (`@cairn/graph`) on the store under test. A graph run is an
 * ordinary run, so this checks that every node's primitive is recorded and replayed as the engine
 * records any call, crashes included.
 */
export const graphsGroup: CaseGroup = caseGroup('engine.graphs', 'engine: graph workflows', [
  conformanceCase('a graph runs parallel starts, a branch, an error edge, a join, a forEach and a sleep', async (env) => {
    const ran: Record<string, number> = {};
    const wf = shapesGraph(ran);
    const w = await engineWorld(env, [wf]);
    const big = await w.runToEnd((await w.engine.startRun(wf, { n: 11, list: [1, 2, 3] })).id);
    assert.equal(big.status, 'completed');
    assert.deepEqual(big.output, BIG_OUTPUT);
    const small = await w.runToEnd((await w.engine.startRun(wf, { n: 2, list: [1, 2, 3] })).id);
    assert.equal(small.status, 'completed');
    assert.deepEqual(small.output, SMALL_OUTPUT);
    const steps = await w.raw.steps.load(small.id);
    assert.equal(steps[0]?.name, `graph:${wf.graphHash}`, 'the first step is the graph marker');
    assert.deepEqual(
      steps
        .map((s) => s.name)
        .slice(1)
        .sort(),
      ['a', 'b', 'join[0]', 'join[1]', 'join[2]', 'nap', 'recover', 'small'].sort(),
      'each node is recorded under its own name',
    );
    const marker = graphMarkerOf(steps);
    assert.equal(marker?.hash, wf.graphHash);
    assert.deepEqual(nodeStates(marker as NonNullable<typeof marker>, steps), {
      a: 'succeeded',
      b: 'succeeded',
      big: 'not-run',
      small: 'failed',
      recover: 'succeeded',
      join: 'succeeded',
      nap: 'succeeded',
    });
  }),

  ...FAULT_POINTS.map((point) =>
    conformanceCase(`a graph run crashed at every ${point} site completes with the same output, each action once`, (env) => crashGraphAt(env, point)),
  ),

  conformanceCase('a failing node without an error edge fails the run, and the actions it followed are compensated in reverse', async (env) => {
    const undone: string[] = [];
    const wf = defineGraph(
      'graph-saga',
      {
        start: 'first',
        nodes: {
          first: { action: 'ok', input: 'first', compensate: 'undo', next: 'second' },
          second: { action: 'ok', input: 'second', compensate: 'undo', next: 'third' },
          third: { action: 'boom' },
        },
      },
      {
        actions: {
          ok: (input) => input,
          undo: (input) => void undone.push((input as { output: string }).output),
          boom: () => {
            throw new Error('third failed');
          },
        },
      },
    );
    const w = await engineWorld(env, [wf]);
    const run = await w.runToEnd((await w.engine.startRun(wf, null)).id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'STEP_FAILED');
    assert.deepEqual(undone, ['second', 'first']);
  }),

  conformanceCase('a condition that cannot be evaluated fails the run with GRAPH_CONDITION naming the node', async (env) => {
    const wf = defineGraph(
      'graph-bad-condition',
      {
        start: 'read',
        nodes: { read: { action: 'echo', next: { branch: [{ when: { gt: [ref('read.total'), 100] }, to: 'after' }] } }, after: { action: 'echo' } },
      },
      { actions: { echo: (input) => input } },
    );
    const w = await engineWorld(env, [wf]);
    const run = await w.runToEnd((await w.engine.startRun(wf, { total: 'lots' })).id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.name, 'GraphError');
    assert.equal(run.error?.code, 'GRAPH_CONDITION');
    assert.match(run.error?.message ?? '', /node "read"/);
  }),

  conformanceCase('an approval gate: refused answers record nothing, the first accepted one goes on, a second is refused', async (env) => {
    const wf = defineGraph(
      'graph-approval',
      {
        start: 'gate',
        nodes: {
          gate: {
            approval: { schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer', minimum: 1 } } }, approvers: ['ada'] },
            next: 'after',
            onReject: 'refused',
          },
          after: { action: 'echo', input: ref('gate.payload') },
          refused: { action: 'echo', input: 'refused' },
        },
      },
      { actions: { echo: (input) => input } },
    );
    const w = await engineWorld(env, [wf]);
    const handle = await w.engine.startRun(wf, null);
    await w.runUntil('the gate waits', async () => (await w.raw.steps.load(handle.id)).some((s) => s.name === 'gate' && s.status === 'waiting'));
    const now = w.clock.now();
    const refusals: [unknown, string][] = [
      [{ by: 'bob', decision: 'approve', payload: { amount: 5 } }, 'APPROVAL_FORBIDDEN'],
      [{ by: 'ada', decision: 'approve', payload: { amount: 0 } }, 'APPROVAL_INVALID'],
      [{ by: 'ada', decision: 'approve' }, 'APPROVAL_INVALID'],
      [{ by: 'ada', decision: 'yes', payload: { amount: 5 } }, 'APPROVAL_INVALID'],
      [{ by: '', decision: 'approve', payload: { amount: 5 } }, 'APPROVAL_INVALID'],
    ];
    for (const [answer, code] of refusals) {
      await assert.rejects(approve(w.engine, handle.id, 'gate', answer as never, { now }), (e) => GraphError.is(e, code as never), JSON.stringify(answer));
    }
    await assert.rejects(approve(w.engine, handle.id, 'after', { by: 'ada', decision: 'approve' }, { now }), (e) => GraphError.is(e, 'APPROVAL_INVALID'));
    assert.equal(await w.raw.events.get(handle.id, 'approval:gate', 1), undefined, 'no refused answer was stored');
    await approve(w.engine, handle.id, 'gate', { by: 'ada', decision: 'approve', payload: { amount: 5 } }, { now });
    await assert.rejects(approve(w.engine, handle.id, 'gate', { by: 'ada', decision: 'reject', payload: { amount: 5 } }, { now }), (e) =>
      GraphError.is(e, 'APPROVAL_NOT_PENDING'),
    );
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'completed');
    assert.deepEqual((run.output as { after: Json }).after, { amount: 5 });
    await assert.rejects(approve(w.engine, handle.id, 'gate', { by: 'ada', decision: 'approve', payload: { amount: 5 } }, { now }), (e) =>
      GraphError.is(e, 'APPROVAL_NOT_PENDING'),
    );
  }),

  conformanceCase('a changed graph under the same version is caught: the check says it diverges, and a replay fails NON_DETERMINISM', async (env) => {
    const spec = (label: string): GraphSpec => ({
      start: 'first',
      nodes: { first: { action: 'echo', input: label, next: 'gate' }, gate: { event: 'go', next: 'last' }, last: { action: 'echo', input: 'last' } },
    });
    const v1 = defineGraph('graph-changed', spec('one'), { actions: { echo: (input) => input } });
    const changed = defineGraph('graph-changed', spec('two'), { actions: { echo: (input) => input } });
    assert.notEqual(v1.graphHash, changed.graphHash);
    const w = await engineWorld(env, [v1]);
    const handle = await w.engine.startRun(v1, null);
    await w.runUntil('the run waits for its event', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
    const same = await checkWorkflowCode({ store: w.raw, workflows: [v1] });
    assert.equal(same.counts.diverges, 0);
    const report = await checkWorkflowCode({ store: w.raw, workflows: [changed] });
    assert.equal(report.counts.diverges, 1, 'the pre-deploy check catches the changed graph');
    await w.engine.stop();
    const next = await w.startEngine([changed]);
    await next.sendEvent(handle.id, 'go', null);
    const run = await w.runToEnd(handle.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'NON_DETERMINISM', JSON.stringify(run.error));
  }),
]);
