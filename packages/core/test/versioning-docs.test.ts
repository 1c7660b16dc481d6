// docs/versioning.md's table of changes is a claim about what happens to an in-flight run: this
// test reads the table, makes each change to a run suspended by the original code, asks the
// pre-deploy check, and (for every change) resumes the run with the changed code. It fails if a
// row of the docs says anything else, or if a row has no case here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { type AnyWorkflowDefinition, checkWorkflowCode, defineEvent, defineWorkflow, type WorkflowContext } from '@cairn/core';
import { createFixture, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const go = defineEvent<{ n: number }>('go');
const other = defineEvent<{ n: number }>('other');

const ship = defineWorkflow('ship', async (ctx, input: { id: string }) => ctx.step('label', () => `label-${input.id}`));
const courier = defineWorkflow('courier', async (ctx, input: { id: string }) => ctx.step('label', () => `courier-${input.id}`));

/** The original workflow: every run is suspended at the event wait, with reserve, cool, charge and the child recorded. */
type Body = (ctx: WorkflowContext, input: { id: string }) => Promise<string>;
const original: Body = async (ctx, input) => {
  const a = await ctx.step('reserve', () => `r-${input.id}`);
  await ctx.sleep('cool', 1000);
  const b = await ctx.step('charge', () => `c-${a}`);
  const label = await ctx.child(ship, { id: input.id });
  const e = await ctx.waitForEvent(go);
  const c = await ctx.step('email', () => `e-${b}-${e.n}`);
  return `${c}/${label}`;
};

/** Each row of the docs' table: the changed build (the workflows it registers). */
const CHANGES: Record<string, () => AnyWorkflowDefinition[]> = {
  'Add a step before the point where runs wait': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.step('audit', () => 1);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Add a step before the wait, inside `ctx.patched`': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      if (ctx.patched('audit')) await ctx.step('audit', () => 1);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Add a step after the point where runs wait': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const out = await original(ctx, input);
      await ctx.step('thank', () => 1);
      return out;
    }),
  ],
  'Remove a step that runs already recorded': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.sleep('cool', 1000);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${a}-${e.n}`)}/${label}`;
    }),
  ],
  'Reorder two recorded steps': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      await ctx.sleep('cool', 1000);
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Rename a recorded step': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve stock', () => `r-${input.id}`);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  "Change a recorded step's body or options (retries, timeout, backoff)": () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `R-${input.id}`, { retries: 5, timeout: '1m' });
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  "Change a recorded sleep's duration": () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.sleep('cool', 60_000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Add an event wait before the point where runs wait': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.waitForEvent(other);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Call a different child workflow': () => [
    courier,
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(courier, { id: input.id });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Change the input a recorded child call passes': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => {
      const a = await ctx.step('reserve', () => `r-${input.id}`);
      await ctx.sleep('cool', 1000);
      const b = await ctx.step('charge', () => `c-${a}`);
      const label = await ctx.child(ship, { id: `${input.id}-x` });
      const e = await ctx.waitForEvent(go);
      return `${await ctx.step('email', () => `e-${b}-${e.n}`)}/${label}`;
    }),
  ],
  'Change the shape of the workflow input': () => [
    defineWorkflow('order', async (ctx, input: { id: string; customer?: string }) => {
      const out = await original(ctx, input);
      return `${out}:${input.customer ?? 'none'}`;
    }),
  ],
  'Register the change as a new version beside the old one': () => [
    defineWorkflow('order', original, { version: '1' }),
    defineWorkflow(
      'order',
      async (ctx, input: { id: string }) => {
        await ctx.step('audit', () => 1);
        return original(ctx, input);
      },
      { version: '2' },
    ),
  ],
  'Deploy a build without the version runs are pinned to': () => [
    defineWorkflow('order', async (ctx, input: { id: string }) => original(ctx, input), { version: '2' }),
  ],
};

interface Row {
  change: string;
  verdict: string;
  resumed: string;
}

/** The table of docs/versioning.md under "## What each change does to runs in flight". */
function documentedRows(): Row[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const text = readFileSync(join(here, '..', '..', '..', 'docs', 'versioning.md'), 'utf8');
  const section = text.split('## What each change does to runs in flight')[1]?.split('\n## ')[0] ?? '';
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || cells[1] === 'Change' || cells[1]?.startsWith('---')) continue;
    const verdict = /`(compatible|diverges|missing-version)`/.exec(cells[2] ?? '')?.[1] ?? `unparsed: ${cells[2]}`;
    const resumed = /^(completes|fails with `NON_DETERMINISM`|waits for a worker with that version)/.exec(cells[3] ?? '')?.[1] ?? `unparsed: ${cells[3]}`;
    rows.push({ change: cells[1] ?? '', verdict, resumed });
  }
  return rows;
}

describe('docs/versioning.md: what each change does to runs in flight', () => {
  const rows = documentedRows();

  it('every row of the table has a case here and every case a row', () => {
    assert.deepEqual(rows.map((r) => r.change).sort(), Object.keys(CHANGES).sort());
  });

  for (const row of rows) {
    it(`${row.change}: the check says ${row.verdict}, and a resumed run ${row.resumed}`, async () => {
      const build = CHANGES[row.change];
      assert.ok(build, `no case for the documented change ${JSON.stringify(row.change)}`);
      let fx = await createFixture({ workflows: [defineWorkflow('order', original, { version: '1' }), ship] });
      try {
        const h = await fx.engine.startRun('order', { id: 'o1' });
        await waitForIdle(fx.inner, h.id);
        await fx.clock.advance(1000);
        await waitForIdle(fx.inner, h.id);
        assert.ok(
          (await fx.inner.steps.load(h.id)).some((s) => s.key === 'event:go' && s.status === 'waiting'),
          'the run waits for its event',
        );
        // The candidate build: the changed workflows and the child they call, as a deploy would register them.
        const changed = build();
        const registered = changed.some((w) => w.name === 'ship') ? changed : [...changed, ship];
        const report = await checkWorkflowCode({ store: fx.store, workflows: registered });
        assert.equal(report.runs.find((r) => r.runId === h.id)?.verdict, row.verdict);
        await fx.engine.stop();
        fx = await createFixture({ workflows: registered, counter: fx.counter, clock: fx.clock });
        await fx.engine.sendEvent(h.id, go, { n: 7 });
        await fx.engine.sendEvent(h.id, other, { n: 8 });
        if (row.resumed === 'waits for a worker with that version') {
          await waitForIdle(fx.inner, h.id);
          assert.equal((await fx.inner.runs.get(h.id))?.status, 'waiting');
          return;
        }
        await fx.clock.advance(60_000);
        const run = await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
        if (row.resumed === 'completes') assert.equal(run.status, 'completed', JSON.stringify(run.error));
        else {
          assert.equal(run.status, 'failed');
          assert.equal(run.error?.code, 'NON_DETERMINISM');
        }
      } finally {
        await fx.engine.stop();
      }
    });
  }
});
