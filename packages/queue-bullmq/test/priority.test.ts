import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CairnError } from '@cairn/core';
import { BULLMQ_PRIORITY_MIDPOINT, MAX_CAIRN_PRIORITY, MIN_CAIRN_PRIORITY, fromBullMQPriority, toBullMQPriority } from '@cairn/queue-bullmq';

describe('priority mapping (Cairn: higher runs sooner; BullMQ: 1 runs first)', () => {
  it('puts Cairn 0 mid-range and keeps the order reversed', () => {
    assert.equal(toBullMQPriority(0), BULLMQ_PRIORITY_MIDPOINT);
    assert.equal(toBullMQPriority(MAX_CAIRN_PRIORITY), 1, 'the highest Cairn priority is BullMQ 1');
    assert.equal(toBullMQPriority(MIN_CAIRN_PRIORITY), 2_097_151, "the lowest is BullMQ's largest");
    assert.ok(toBullMQPriority(5) < toBullMQPriority(4), 'higher Cairn priority → smaller BullMQ number');
    assert.ok(toBullMQPriority(-1) > toBullMQPriority(0));
    for (const p of [MIN_CAIRN_PRIORITY, -7, 0, 7, MAX_CAIRN_PRIORITY]) assert.equal(fromBullMQPriority(toBullMQPriority(p)), p);
  });

  it('never produces 0 (BullMQ would run such a job before every prioritized one)', () => {
    for (const p of [MIN_CAIRN_PRIORITY, 0, MAX_CAIRN_PRIORITY]) assert.ok(toBullMQPriority(p) >= 1);
  });

  it('refuses what it cannot represent instead of clamping it', () => {
    for (const p of [MAX_CAIRN_PRIORITY + 1, MIN_CAIRN_PRIORITY - 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => toBullMQPriority(p),
        (e: unknown) => CairnError.is(e, 'INVALID_INPUT'),
        String(p),
      );
    }
  });
});
