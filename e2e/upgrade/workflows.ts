/**
 * The workflows of the upgrade test (e2e/upgrade/README.md): ONE definition, loaded both by the
 * child process that runs an earlier build of Cairn and by the test process that runs today's. It
 * imports nothing from `@cairn/*`: the build's `defineWorkflow` is passed in, and the context is
 * typed structurally with what every build since 69ed3f8 has (`ctx.step/sleep/waitForEvent/child/
 * setState/state/now/random/uuid`, step options `retries/backoff/queued/compensate`).
 *
 * Every step body (and compensation) first appends `<runId> <stepName>` to the side-effect log, so
 * the test counts body executions across both processes. Values depend only on the run's input
 * and on event payloads, so each run's correct output is known in advance (`expectedFor`).
 */
import { appendFileSync } from 'node:fs';

/** How long the sleeps of `upg-sleep` last: longer than the old process takes to suspend its runs and stop. */
export const SLEEP_MS = 2500;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The part of a build's workflow context this module uses. */
export interface UpgradeContext {
  readonly runId: string;
  step<T>(
    name: string,
    fn: (step: { runId: string; attempt: number }) => Promise<T> | T,
    options?: { retries?: number; backoff?: { type: 'fixed'; delay: number }; queued?: boolean; compensate?: (error: Error) => unknown },
  ): Promise<T>;
  sleep(name: string, duration: number): Promise<void>;
  waitForEvent<T extends Json = Json>(event: string): Promise<T>;
  child<O>(workflow: unknown, input: Json): Promise<O>;
  setState(key: string, value: Json): Promise<void>;
  state<T extends Json = Json>(key: string): Promise<T | undefined>;
  now(): Promise<number>;
  random(): Promise<number>;
  uuid(): Promise<string>;
}

/** A build's `defineWorkflow`, as this module calls it. */
// biome-ignore lint/suspicious/noExplicitAny: each build's defineWorkflow has its own context type; this module only needs its shape
export type DefineWorkflow = (name: string, handler: (ctx: any, input: any) => Promise<unknown>) => unknown;

export interface UpgradeInput {
  n: number;
}

/** An event the test sends after the upgrade (or, with `by: 'old'`, the old process before it). */
export interface UpgradeEvent {
  /** `run`: the run itself; `child`: its child run (found through the parent's child step). */
  target: 'run' | 'child';
  name: string;
  by: 'old' | 'new';
}

export interface KindSpec {
  /** The kind of run, as the failure report names it. */
  kind: string;
  /** The top-level workflow. */
  workflow: string;
  /** The child workflow it starts, if any. */
  child?: string;
  events: UpgradeEvent[];
  /** Whether its suspension has a timer (started last in the old process, so the timer is still ahead when it stops). */
  timer?: boolean;
}

export const KINDS: readonly KindSpec[] = [
  { kind: 'inline steps + event', workflow: 'upg-steps', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'event wait (issue 27)', workflow: 'upg-event', events: [{ target: 'run', name: 'paid', by: 'new' }] },
  { kind: 'child completed, then event', workflow: 'upg-child-done', child: 'upg-child-echo', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'parent waiting on child', workflow: 'upg-child-waiting', child: 'upg-child-wait', events: [{ target: 'child', name: 'go', by: 'new' }] },
  { kind: 'queued steps + event', workflow: 'upg-queued', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'state + event', workflow: 'upg-state', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'fan-out of 3 steps, then event', workflow: 'upg-fanout-steps', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'fan-out of 2-step branches, then event', workflow: 'upg-fanout-branches', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'fan-out suspended on a wait inside it', workflow: 'upg-fanout-inner-wait', events: [{ target: 'run', name: 'go', by: 'new' }] },
  {
    kind: 'fan-out of 2 event waits',
    workflow: 'upg-fanout-waits',
    events: [
      { target: 'run', name: 'right', by: 'new' },
      { target: 'run', name: 'left', by: 'new' },
    ],
  },
  { kind: 'now/random/uuid + event', workflow: 'upg-recorded', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'retried step + event', workflow: 'upg-retry', events: [{ target: 'run', name: 'go', by: 'new' }] },
  {
    kind: 'event sent before the upgrade, waited after',
    workflow: 'upg-early-event',
    events: [
      { target: 'run', name: 'late', by: 'old' },
      { target: 'run', name: 'go', by: 'new' },
    ],
  },
  { kind: 'failed step with compensate caught, then event', workflow: 'upg-compensate', events: [{ target: 'run', name: 'go', by: 'new' }] },
  { kind: 'sleep (issue 27)', workflow: 'upg-sleep', events: [], timer: true },
];

/** The payload of event `name` sent to run `runId`'s target, by the old or the new process. */
export function eventPayload(name: string, by: 'old' | 'new', n: number): Json {
  return { event: name, by, n };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Defines every workflow of the test with one build's `defineWorkflow`. `log` is the side-effect log file. */
export function upgradeWorkflows(defineWorkflow: DefineWorkflow, log: string): unknown[] {
  /** A step body: logs its execution, waits `delayMs` (so fan-out siblings finish out of call order), returns `value`. */
  const body =
    <T>(ctx: UpgradeContext, name: string, value: T, delayMs = 0) =>
    async (): Promise<T> => {
      appendFileSync(log, `${ctx.runId} ${name}\n`);
      if (delayMs > 0) await pause(delayMs);
      return value;
    };
  const tag = (name: string, n: number) => `${name}:${n}`;

  const childEcho = defineWorkflow('upg-child-echo', async (ctx: UpgradeContext, input: UpgradeInput) => {
    return { echo: await ctx.step('echo', body(ctx, 'echo', tag('echo', input.n))) };
  });
  const childWait = defineWorkflow('upg-child-wait', async (ctx: UpgradeContext, input: UpgradeInput) => {
    const c1 = await ctx.step('c1', body(ctx, 'c1', tag('c1', input.n)));
    const go = await ctx.waitForEvent('go');
    const c2 = await ctx.step('c2', body(ctx, 'c2', tag('c2', input.n)));
    return { c1, go, c2 };
  });

  return [
    childEcho,
    childWait,
    defineWorkflow('upg-steps', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      const go = await ctx.waitForEvent('go');
      const c = await ctx.step('c', body(ctx, 'c', tag('c', input.n)));
      return { a, b, go, c };
    }),
    defineWorkflow('upg-event', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const reserve = await ctx.step('reserve', body(ctx, 'reserve', tag('reserve', input.n)));
      const paid = await ctx.waitForEvent('paid');
      const ship = await ctx.step('ship', body(ctx, 'ship', tag('ship', input.n)));
      return { reserve, paid, ship };
    }),
    defineWorkflow('upg-sleep', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      await ctx.sleep('nap', SLEEP_MS);
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { a, b };
    }),
    defineWorkflow('upg-child-done', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const child = await ctx.child(childEcho, { n: input.n });
      const go = await ctx.waitForEvent('go');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { a, child, go, b };
    }),
    defineWorkflow('upg-child-waiting', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const child = await ctx.child(childWait, { n: input.n });
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { a, child, b };
    }),
    defineWorkflow('upg-queued', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const q1 = await ctx.step('q1', body(ctx, 'q1', tag('q1', input.n)), { queued: true });
      const go = await ctx.waitForEvent('go');
      const q2 = await ctx.step('q2', body(ctx, 'q2', tag('q2', input.n)), { queued: true });
      return { q1, go, q2 };
    }),
    defineWorkflow('upg-state', async (ctx: UpgradeContext, input: UpgradeInput) => {
      await ctx.setState('phase', 'started');
      await ctx.setState('n', input.n);
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const go = await ctx.waitForEvent('go');
      const before = await ctx.state('phase');
      await ctx.setState('phase', 'resumed');
      const after = await ctx.state('phase');
      const n = await ctx.state('n');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { a, go, before: before ?? null, after: after ?? null, n: n ?? null, b };
    }),
    defineWorkflow('upg-fanout-steps', async (ctx: UpgradeContext, input: UpgradeInput) => {
      // Called f1, f2, f3; they finish f2, f3, f1.
      const fan = await Promise.all([
        ctx.step('f1', body(ctx, 'f1', tag('f1', input.n), 60)),
        ctx.step('f2', body(ctx, 'f2', tag('f2', input.n))),
        ctx.step('f3', body(ctx, 'f3', tag('f3', input.n), 25)),
      ]);
      const go = await ctx.waitForEvent('go');
      const after = await ctx.step('after', body(ctx, 'after', tag('after', input.n)));
      return { fan, go, after };
    }),
    defineWorkflow('upg-fanout-branches', async (ctx: UpgradeContext, input: UpgradeInput) => {
      // Recorded a1, b1, b2, a2: the branches' steps interleave.
      const fan = await Promise.all([
        (async () => [await ctx.step('a1', body(ctx, 'a1', tag('a1', input.n), 60)), await ctx.step('a2', body(ctx, 'a2', tag('a2', input.n)))])(),
        (async () => [await ctx.step('b1', body(ctx, 'b1', tag('b1', input.n))), await ctx.step('b2', body(ctx, 'b2', tag('b2', input.n), 10))])(),
      ]);
      const go = await ctx.waitForEvent('go');
      const after = await ctx.step('after', body(ctx, 'after', tag('after', input.n)));
      return { fan, go, after };
    }),
    defineWorkflow('upg-fanout-inner-wait', async (ctx: UpgradeContext, input: UpgradeInput) => {
      // The run suspends inside the fan-out: its steps are done, the event wait is not.
      const fan = await Promise.all([
        ctx.step('s1', body(ctx, 's1', tag('s1', input.n), 40)),
        ctx.waitForEvent('go'),
        (async () => [await ctx.step('s2', body(ctx, 's2', tag('s2', input.n))), await ctx.step('s3', body(ctx, 's3', tag('s3', input.n), 10))])(),
      ]);
      const after = await ctx.step('after', body(ctx, 'after', tag('after', input.n)));
      return { fan, after };
    }),
    defineWorkflow('upg-fanout-waits', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const [left, right] = await Promise.all([ctx.waitForEvent('left'), ctx.waitForEvent('right')]);
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { a, left, right, b };
    }),
    defineWorkflow('upg-recorded', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const now = await ctx.now();
      const random = await ctx.random();
      const uuid = await ctx.uuid();
      // The note's recorded output is what the first execution saw; a replay must see the same.
      const noted = await ctx.step('note', body(ctx, 'note', { now, random, uuid }));
      const go = await ctx.waitForEvent('go');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { same: noted.now === now && noted.random === random && noted.uuid === uuid, go, b };
    }),
    defineWorkflow('upg-retry', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const flaky = await ctx.step(
        'flaky',
        async (step) => {
          appendFileSync(log, `${ctx.runId} flaky\n`);
          if (step.attempt === 1) throw new Error('flaky fails its first attempt');
          return `${tag('flaky', input.n)}@${step.attempt}`;
        },
        { retries: 2, backoff: { type: 'fixed', delay: 20 } },
      );
      const go = await ctx.waitForEvent('go');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { flaky, go, b };
    }),
    defineWorkflow('upg-early-event', async (ctx: UpgradeContext, input: UpgradeInput) => {
      const a = await ctx.step('a', body(ctx, 'a', tag('a', input.n)));
      const go = await ctx.waitForEvent('go');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      const late = await ctx.waitForEvent('late');
      const c = await ctx.step('c', body(ctx, 'c', tag('c', input.n)));
      return { a, go, b, late, c };
    }),
    defineWorkflow('upg-compensate', async (ctx: UpgradeContext, input: UpgradeInput) => {
      // Before the saga rework, `compensate` ran when the step failed its last attempt (then the
      // step's error reached the workflow); today it undoes a succeeded step when the run fails.
      let caught = false;
      try {
        await ctx.step(
          'charge',
          async () => {
            appendFileSync(log, `${ctx.runId} charge\n`);
            throw new Error('card declined');
          },
          {
            compensate: () => {
              appendFileSync(log, `${ctx.runId} charge:compensate\n`);
            },
          },
        );
      } catch {
        caught = true;
      }
      const go = await ctx.waitForEvent('go');
      const b = await ctx.step('b', body(ctx, 'b', tag('b', input.n)));
      return { caught, go, b };
    }),
  ];
}

/** What a run of `workflow` on input `n` must return and which bodies it must have run how often, had nothing been upgraded. */
/**
 * What the build that suspended the runs did before the upgrade, where builds differ: `legacyCompensation`
 * (builds before 0.2.0) ran a step's `compensate` when the step failed its last attempt; from 0.2.0
 * it undoes a succeeded step when the run fails, so a caught failure runs none.
 */
export interface BuildSemantics {
  legacyCompensation: boolean;
}

/** The semantics of a build from its `@cairn/core` version. */
export function semanticsOf(coreVersion: string): BuildSemantics {
  return { legacyCompensation: coreVersion.startsWith('0.1.') };
}

export function expectedFor(
  workflow: string,
  n: number,
  semantics: BuildSemantics = { legacyCompensation: true },
): { output: Json; bodies: Record<string, number> } {
  const t = (name: string) => `${name}:${n}`;
  const ev = (name: string, by: 'old' | 'new' = 'new') => eventPayload(name, by, n);
  const once = (...names: string[]) => Object.fromEntries(names.map((name) => [name, 1]));
  switch (workflow) {
    case 'upg-child-echo':
      return { output: { echo: t('echo') }, bodies: once('echo') };
    case 'upg-child-wait':
      return { output: { c1: t('c1'), go: ev('go'), c2: t('c2') }, bodies: once('c1', 'c2') };
    case 'upg-steps':
      return { output: { a: t('a'), b: t('b'), go: ev('go'), c: t('c') }, bodies: once('a', 'b', 'c') };
    case 'upg-event':
      return { output: { reserve: t('reserve'), paid: ev('paid'), ship: t('ship') }, bodies: once('reserve', 'ship') };
    case 'upg-sleep':
      return { output: { a: t('a'), b: t('b') }, bodies: once('a', 'b') };
    case 'upg-child-done':
      return { output: { a: t('a'), child: { echo: t('echo') }, go: ev('go'), b: t('b') }, bodies: once('a', 'b') };
    case 'upg-child-waiting':
      return { output: { a: t('a'), child: { c1: t('c1'), go: ev('go'), c2: t('c2') }, b: t('b') }, bodies: once('a', 'b') };
    case 'upg-queued':
      return { output: { q1: t('q1'), go: ev('go'), q2: t('q2') }, bodies: once('q1', 'q2') };
    case 'upg-state':
      return { output: { a: t('a'), go: ev('go'), before: 'started', after: 'resumed', n, b: t('b') }, bodies: once('a', 'b') };
    case 'upg-fanout-steps':
      return { output: { fan: [t('f1'), t('f2'), t('f3')], go: ev('go'), after: t('after') }, bodies: once('f1', 'f2', 'f3', 'after') };
    case 'upg-fanout-branches':
      return {
        output: {
          fan: [
            [t('a1'), t('a2')],
            [t('b1'), t('b2')],
          ],
          go: ev('go'),
          after: t('after'),
        },
        bodies: once('a1', 'a2', 'b1', 'b2', 'after'),
      };
    case 'upg-fanout-inner-wait':
      return { output: { fan: [t('s1'), ev('go'), [t('s2'), t('s3')]], after: t('after') }, bodies: once('s1', 's2', 's3', 'after') };
    case 'upg-fanout-waits':
      return { output: { a: t('a'), left: ev('left'), right: ev('right'), b: t('b') }, bodies: once('a', 'b') };
    case 'upg-recorded':
      return { output: { same: true, go: ev('go'), b: t('b') }, bodies: once('note', 'b') };
    case 'upg-retry':
      return { output: { flaky: `${t('flaky')}@2`, go: ev('go'), b: t('b') }, bodies: { flaky: 2, b: 1 } };
    case 'upg-early-event':
      return { output: { a: t('a'), go: ev('go'), b: t('b'), late: ev('late', 'old'), c: t('c') }, bodies: once('a', 'b', 'c') };
    case 'upg-compensate':
      return {
        output: { caught: true, go: ev('go'), b: t('b') },
        bodies: semantics.legacyCompensation ? once('charge', 'charge:compensate', 'b') : { ...once('charge', 'b'), 'charge:compensate': 0 },
      };
    default:
      throw new Error(`no expectation for workflow ${workflow}`);
  }
}
