// docs/graphs.md's example, run: its code is this folder's order-approval.ts, which the doc must
// quote exactly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { approve, GraphError, toMermaid } from '@cairn/graph';
import { graphWorld } from './helpers/graph-world.js';
import { calls, orderApproval } from './order-approval.js';

const order = (total: number) => ({ orderId: 'o-1', total, lines: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c' }] });

describe('the order-approval example', () => {
  it('docs/graphs.md quotes the example and its drawing exactly', () => {
    const doc = readFileSync(new URL('../../../docs/graphs.md', import.meta.url), 'utf8');
    const code = readFileSync(new URL('./order-approval.ts', import.meta.url), 'utf8');
    assert.ok(doc.includes(code.trim()), 'docs/graphs.md must contain packages/graph/test/order-approval.ts verbatim');
    assert.ok(doc.includes(`\`\`\`mermaid\n${toMermaid(orderApproval.graph)}\`\`\``), 'docs/graphs.md must contain the Mermaid drawing toMermaid prints');
  });

  it('a small order is charged and shipped with no approval', async () => {
    calls.length = 0;
    const w = await graphWorld([orderApproval]);
    try {
      const handle = await w.engine.startRun(orderApproval, order(200));
      const run = await w.until(handle.id);
      assert.equal(run.status, 'completed');
      assert.deepEqual(run.output, {
        payment: 'pay-1',
        parcels: [{ parcel: 'parcel-a' }, { parcel: 'parcel-b' }, { parcel: 'parcel-c' }],
        approval: null,
        cancelled: null,
      });
      assert.equal(calls.filter((c) => c.startsWith('ship')).length, 3);
      assert.equal(calls.filter((c) => c.startsWith('charge')).length, 1);
    } finally {
      await w.stop();
    }
  });

  it('a large order waits for a manager; refused answers record nothing; an approval goes on', async () => {
    calls.length = 0;
    const w = await graphWorld([orderApproval]);
    try {
      const handle = await w.engine.startRun(orderApproval, order(5000));
      await w.until(handle.id, (run) => run.status === 'waiting');
      const now = w.clock.now();
      await assert.rejects(approve(w.engine, handle.id, 'managerApproval', { by: 'mallory', decision: 'approve' }, { now }), (e) =>
        GraphError.is(e, 'APPROVAL_FORBIDDEN'),
      );
      await assert.rejects(
        approve(w.engine, handle.id, 'managerApproval', { by: 'ada', decision: 'approve', payload: { note: 42 } }, { now }),
        (e) => GraphError.is(e, 'APPROVAL_INVALID') && /payload\.note must be a string/.test((e as Error).message),
      );
      await assert.rejects(approve(w.engine, handle.id, 'charge', { by: 'ada', decision: 'approve' }, { now }), (e) => GraphError.is(e, 'APPROVAL_INVALID'));
      await assert.rejects(approve(w.engine, handle.id, 'managerApproval', { by: 'ada', decision: 'maybe' as 'approve' }, { now }), (e) =>
        GraphError.is(e, 'APPROVAL_INVALID'),
      );
      assert.equal(await w.store.events.get(handle.id, 'approval:managerApproval', 1), undefined, 'a refused answer records nothing');
      assert.equal(calls.filter((c) => c.startsWith('charge')).length, 0);
      await approve(w.engine, handle.id, 'managerApproval', { by: 'grace', decision: 'approve', payload: { note: 'ok' } }, { now });
      await assert.rejects(approve(w.engine, handle.id, 'managerApproval', { by: 'ada', decision: 'reject', payload: {} }, { now }), (e) =>
        GraphError.is(e, 'APPROVAL_NOT_PENDING'),
      );
      const run = await w.until(handle.id);
      assert.equal(run.status, 'completed');
      assert.deepEqual((run.output as { approval: unknown }).approval, { by: 'grace', decision: 'approve', payload: { note: 'ok' } });
      assert.equal((run.output as { payment: unknown }).payment, 'pay-1');
    } finally {
      await w.stop();
    }
  });

  it('a rejected order is cancelled; an expired gate takes its expiry edge and approve refuses it', async () => {
    for (const outcome of ['reject', 'expire'] as const) {
      calls.length = 0;
      const w = await graphWorld([orderApproval]);
      try {
        const handle = await w.engine.startRun(orderApproval, order(5000));
        await w.until(handle.id, (run) => run.status === 'waiting');
        if (outcome === 'reject') await approve(w.engine, handle.id, 'managerApproval', { by: 'ada', decision: 'reject', payload: {} }, { now: w.clock.now() });
        else {
          await assert.rejects(
            approve(w.engine, handle.id, 'managerApproval', { by: 'ada', decision: 'approve', payload: {} }, { now: w.clock.now() + 2 * 86_400_000 }),
            (e) => GraphError.is(e, 'APPROVAL_EXPIRED'),
          );
          await w.clock.advance(2 * 86_400_000);
        }
        const run = await w.until(handle.id);
        assert.equal(run.status, 'completed', outcome);
        const output = run.output as { payment: unknown; cancelled: unknown };
        assert.equal(output.payment, null, outcome);
        assert.equal(output.cancelled, true, outcome);
        assert.equal(calls.filter((c) => c.startsWith('charge')).length, 0, outcome);
      } finally {
        await w.stop();
      }
    }
  });
});
